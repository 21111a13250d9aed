#!/usr/bin/env bash
# Sets the machine up (scripts/setup.sh), then configures and builds zero in
# build/ (or $ZERO_BUILD_DIR) with ninja and ccache. Extra arguments are ninja
# targets.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${ZERO_BUILD_DIR:-$root/build}

bash "$root/scripts/setup.sh"
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release
fi
ninja -C "$build" "$@"
