#!/usr/bin/env bash
# Builds zero with AddressSanitizer and UndefinedBehaviorSanitizer (every
# library, tool and the runtime; undefined behaviour ends the program) in
# build-sanitize/ (or $ZERO_SANITIZE_BUILD_DIR), and runs the whole suite
# there. The sanitizers' options, and why each exception, are in
# test/lit.cfg.py. It compiles file by file (no unity build), which also
# checks that each file includes what it uses. Ends with the suite's summary, as scripts/test.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export ZERO_BUILD_DIR=${ZERO_SANITIZE_BUILD_DIR:-$root/build-sanitize}

bash "$root/scripts/setup.sh"
if [ ! -f "$ZERO_BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$ZERO_BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS=-g1 -DCMAKE_C_FLAGS=-g1 \
    -DZERO_SANITIZERS=address,undefined -DZERO_UNITY_BUILD=OFF
fi
exec bash "$root/scripts/test.sh"
