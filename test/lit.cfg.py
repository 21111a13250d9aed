# -*- Python -*-
# lit configuration of zero's FileCheck and integration tests.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "zero"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.zero_obj_root, "test")
# Unit/ has its own configuration; inputs are not tests.
config.excludes = ["Unit", "Inputs", "FakeCuda", "CMakeLists.txt", "lit.cfg.py",
                   "lit.site.cfg.py", "consumer", "README.md"]

config.substitutions.append(("%zero_src", config.zero_src_root))
config.substitutions.append(("%zero_obj", config.zero_obj_root))
# Longest first: lit replaces in order, and %cmake prefixes %cmake_generator.
config.substitutions.append(("%cmake_generator", config.cmake_generator))
config.substitutions.append(("%cmake", config.cmake_command))
config.substitutions.append(("%cxx", config.cxx_compiler))
config.substitutions.append(("%mlir_dir", config.mlir_dir))
# The directory of the stand-in CUDA driver (test/FakeCuda).
config.substitutions.append(
    ("%fake_cuda", os.path.join(config.zero_obj_root, "test", "fake-cuda")))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.zero_tools_dir, config.llvm_tools_dir]
tools = ["zero-opt", "zero-run", "zero-compile", "zero-launch", "zero-launch-steps", "zero-reshard", "zero-collective-check", "zero-trace-render", "zero-gen-step", "FileCheck", "not", "count", "split-file"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# The check every optimizer example goes through: run as given and after the
# sharding pipeline, on the same inputs, and compare every result bit for bit.
config.substitutions.append(
    ("%shard_pipeline", "zero-shard-weight-update,canonicalize,cse"))
# The same with the weights of a training loop carried as shards.
config.substitutions.append(
    ("%defer_pipeline",
     "zero-shard-weight-update,zero-defer-all-gather,canonicalize,cse"))

# MPI tests run under mpirun with more processes than cores, each output line
# tagged with its rank so that lines of two processes never mix, and killed
# after 5 minutes should MPI itself hang; OpenMPI refuses
# to run as root (a CI container) unless told twice.
import shutil
if config.zero_runtime_has_mpi.upper() in ("1", "TRUE", "ON") and shutil.which("mpirun"):
    config.available_features.add("mpi")
    config.substitutions.append(
        ("%mpirun", "mpirun --oversubscribe --bind-to none --tag-output --timeout 300"))
for var in ["OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"]:
    config.environment[var] = "1"

# The GPU path: ptxas (from the CUDA toolkit zero-to-nvvm uses) makes cubins;
# a CUDA driver means a GPU may be present, and tests of its absence skip.
# A sanitized build (scripts/sanitize.sh): the sanitizers' options, each
# exception explained here and in docs/Testing.md, and the flags that a
# project linking zero's instrumented libraries needs.
sanitize_flags = ""
if config.zero_sanitizers:
    config.available_features.add("sanitized")
    sanitize_flags = "-fsanitize=" + config.zero_sanitizers
    # zero's code sees LLVM's allocators through their headers, instrumented,
    # where they poison what they recycle; libMLIR's uninstrumented copies
    # never unpoison it (a use-after-poison in StringAttr::get). Only that
    # manual poisoning is off: every other ASan check stays.
    asan = "allow_user_poisoning=0"
    config.environment["ASAN_OPTIONS"] = asan
    config.environment["UBSAN_OPTIONS"] = "print_stacktrace=1"
    # OpenMPI's own progress thread (libevent, in components OpenMPI loads
    # and unloads itself) allocates what it never frees, in code without
    # frame pointers: LeakSanitizer's fast unwinder stops in an unnamed
    # module that no suppression can match, and its slow unwinder deadlocks
    # in zero-run's JIT. Processes under mpirun keep every ASan and UBSan
    # check but the leak check; zero's runtime is leak-checked in every
    # other test, on the local backend.
    config.substitutions = [
        (name, "env ASAN_OPTIONS=" + asan + ":detect_leaks=0 " + value
         if name == "%mpirun" else value)
        for name, value in config.substitutions]
config.substitutions.append(("%sanitize_flags", sanitize_flags))
# The linker zero was built with (lld when installed), for the projects the
# tests build outside the tree.
config.substitutions.append(("%link_flags", config.zero_link_flags))

if os.path.exists(os.path.join(config.zero_cuda_path, "bin", "ptxas")):
    config.available_features.add("ptxas")
try:
    import ctypes
    ctypes.CDLL("libcuda.so.1")
    config.available_features.add("cuda-driver")
except OSError:
    pass
