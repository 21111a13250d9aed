#!/usr/bin/env bash
# Sets the machine up (scripts/setup.sh), then configures and builds zero in
# build/ (or $ZERO_BUILD_DIR) with ninja and ccache. Extra arguments are ninja
# targets (default: everything).
#
# Says what it is doing: a line per stage, and ninja's progress as a line at
# every tenth of the steps (ZERO_BUILD_VERBOSE=1: every step). A compiler's
# messages and a failure's command are printed whole.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${ZERO_BUILD_DIR:-$root/build}

bash "$root/scripts/setup.sh"
if [ ! -f "$build/build.ninja" ]; then
  echo "build: configuring $build (cmake; log in $build/cmake.log)"
  mkdir -p "$build"
  if ! cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
      >"$build/cmake.log" 2>&1; then
    cat "$build/cmake.log" >&2
    echo "build: cmake failed (log: $build/cmake.log)" >&2
    exit 1
  fi
fi
echo "build: ninja ${*:-all} (a first build takes minutes on 2 cores)"
# ninja prints "[finished/total elapsed] description" per step. Read line by
# line in bash: awk (Debian's mawk) reads a pipe in large blocks, and would
# print nothing until a block filled.
NINJA_STATUS="[%f/%t %e] " ninja -C "$build" "$@" | {
  next_percent=0
  step='^\[([0-9]+)/([0-9]+) ([0-9]+)[0-9.]*\] '
  while IFS= read -r line; do
    if [[ $line =~ $step ]]; then
      done=${BASH_REMATCH[1]} total=${BASH_REMATCH[2]}
      seconds=${BASH_REMATCH[3]} percent=$((100 * done / total))
      if [[ ${ZERO_BUILD_VERBOSE:-0} == 1 ]] || ((percent >= next_percent)) ||
        ((done == total)); then
        printf "build: %3d%% (%d/%d steps, %d s)\n" "$percent" "$done" \
          "$total" "$seconds"
        while ((next_percent <= percent)); do next_percent=$((next_percent + 10)); done
      fi
    elif [[ $line != "ninja: Entering directory"* ]]; then
      printf '%s\n' "$line"
    fi
  done
}
