#!/usr/bin/env bash
# The main demo: sets the machine up, builds zero-opt and zero-run, and shows
# an example training step (examples/momentum_sgd.mlir by default, or the file
# given) before and after zero's sharding pipeline, with the per-rank
# communication report of each; then runs both on the mesh's ranks (threads of
# the local backend) on the same inputs and compares every result.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${ZERO_BUILD_DIR:-$root/build}
input=${1:-$root/examples/momentum_sgd.mlir}

echo "demo: setting up and building zero-opt and zero-run (scripts/build.sh)"
bash "$root/scripts/build.sh" zero-opt zero-run
echo
opt="$build/bin/zero-opt"
# The sharding pipeline in pass-pipeline syntax (zero-run's), and as
# zero-opt's flag: 'p{a b}' is '--p=a b'.
pipeline=${ZERO_DEMO_PIPELINE:-zero-weight-update-sharding{shard-function-boundary}}
flag="--${pipeline%\}}"
flag="${flag/\{/=}"

echo "=== input: $input"
"$opt" "$input"
echo
echo "=== zero-report of the input (per rank, per step)"
"$opt" "$input" --zero-report -o /dev/null
echo
echo "=== after: zero-opt '$flag'"
"$opt" "$input" "$flag"
echo
echo "=== zero-report of the result"
"$opt" "$input" "$flag" --zero-report -o /dev/null
echo
echo "=== zero-run: both programs on every rank, same inputs, results compared"
# Argument 2 of the default example, the local gradient, differs per rank.
"$build/bin/zero-run" "$input" --per-rank "${ZERO_DEMO_PER_RANK:-2}" \
  --equivalent-after="$pipeline"
