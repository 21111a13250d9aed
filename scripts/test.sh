#!/usr/bin/env bash
# Runs every zero test: sets the machine up, builds what the suite runs
# (`zero-test-depends`), and runs `check-zero` (the lit suite, FileCheck and
# integration tests, with the GoogleTest unit tests). Ends with the suite's
# summary as "N passed, N failed".
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${ZERO_BUILD_DIR:-$root/build}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

bash "$root/scripts/build.sh" zero-test-depends || exit 1
ninja -C "$build" check-zero 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

passed=$(sed -n 's/^ *Passed *: *\([0-9]*\).*/\1/p' "$log" | tail -1)
failed=$(sed -n 's/^ *Failed *: *\([0-9]*\).*/\1/p' "$log" | tail -1)
echo "zero: ${passed:-0} passed, ${failed:-0} failed"
if [ "$status" -ne 0 ] && [ "${failed:-0}" -eq 0 ]; then
  echo "zero: the test run failed before its summary (exit $status)" >&2
fi
exit "$status"
