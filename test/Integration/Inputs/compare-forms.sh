#!/bin/bash
# For every example and each of zero-weight-update-sharding's modes, the
# figures of zero-report (collectives, bytes per rank, model state) of the
# example as written must equal those of its three linalg forms. Prints one
# line per comparison; exits 1 at the first difference, or if a sharded
# example reports no collective.
# Usage: compare-forms.sh ZERO_OPT EXAMPLES_DIR
set -u
zero_opt=$1
examples=$2
forms=("--convert-elementwise-to-linalg"
       "--convert-elementwise-to-linalg --linalg-fuse-elementwise-ops"
       "--convert-elementwise-to-linalg --linalg-fuse-elementwise-ops --linalg-generalize-named-ops")
# A one-device program annotated with shard.shard goes through MLIR's own
# data-parallel flow first (zero-data-parallel); the rest are zero's style.
pipeline=zero-weight-update-sharding
figures() {
  "$zero_opt" --$pipeline="$1" --zero-report -o /dev/null 2>&1 |
    grep -E '^  (total|bytes sent|model state|    weights)'
}
for mode in "" "defer-all-gather" "stage=3 shard-function-boundary"; do
  for example in "$examples"/*.mlir; do
    pipeline=zero-weight-update-sharding
    grep -q 'shard\.shard' "$example" && pipeline=zero-data-parallel
    given=$(figures "$mode" < "$example") || exit 1
    if ! grep -q '^  total  *[1-9]' <<< "$given"; then
      echo "no collective: $example [$mode]"; exit 1
    fi
    for form in "${forms[@]}"; do
      got=$("$zero_opt" "$example" $form | figures "$mode")
      if [ "$given" != "$got" ]; then
        echo "differs: $(basename "$example") [$mode] after $form"
        diff <(echo "$given") <(echo "$got")
        exit 1
      fi
      echo "same: $(basename "$example") [$mode] after $form"
    done
  done
done
