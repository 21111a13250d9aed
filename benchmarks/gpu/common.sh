# What the GPU scripts share (sourced): "prepare|run DIR" from the command
# line, in two halves because the GPU machine has no LLVM or MLIR. Sets
# mode, dir, root (the checkout) and bin (zero's tools, for prepare).
set -euo pipefail
mode=${1:-}
dir=${2:-}
[[ ( $mode == prepare || $mode == run ) && -n $dir ]] ||
  { echo "usage: $0 prepare|run DIR" >&2; exit 2; }
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=${ZERO_BIN:-$root/build/bin}
