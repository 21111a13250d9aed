# -*- Python -*-
# Runs zero's GoogleTest binaries (unittests/, with the runtime's own from
# runtime/test) as lit tests.

import os

import lit.formats

config.name = "zero-unit"
config.suffixes = []
config.test_exec_root = os.path.join(config.zero_obj_root, "unittests")
config.test_source_root = config.test_exec_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
