# -*- Python -*-
# Runs zero's GoogleTest binaries as lit tests.

import os

import lit.formats

config.name = "zero-unit"
config.suffixes = []
# unittests/, and the runtime's own tests (runtime/test, which ctest also
# runs in a runtime-only build).
config.test_exec_root = config.zero_obj_root
config.test_source_root = config.test_exec_root
config.test_format = lit.formats.GoogleTest("unittests;runtime/test", "Tests")
