# What the GPU scripts share (sourced): "prepare|run DIR" from the command
# line, in two halves because the GPU machine has no LLVM or MLIR (a script
# with more modes lists them in `modes` before sourcing this). Sets mode,
# dir, root (the checkout) and bin (zero's tools, for prepare).
set -euo pipefail
modes=${modes:-prepare run}
mode=${1:-}
dir=${2:-}
[[ " $modes " == *" $mode "* && -n $mode && -n $dir ]] ||
  { echo "usage: $0 ${modes// /|} DIR" >&2; exit 2; }
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=${ZERO_BIN:-$root/build/bin}

# Builds runtime/ alone into $1 (on the GPU machine), with NCCL from the
# nvidia-nccl wheel when there is no system NCCL; prints nothing on success.
build_runtime() {
  local nccl_root
  nccl_root=$(python3 -c 'import nvidia.nccl as m; print(list(m.__path__)[0])' \
    2>/dev/null || true)
  cmake -G Ninja -S "$root/runtime" -B "$1" -DCMAKE_BUILD_TYPE=Release \
    ${nccl_root:+-DZERO_NCCL_ROOT="$nccl_root"} >/dev/null
  cmake --build "$1" >/dev/null
}
