#!/bin/bash
# offload-examples.sh SRC BIN FAKE_CUDA DIR: every example under
# SRC/examples, run by zero's tools in BIN (mlir-opt from PATH),
# with offload=optimizer and with offload=params, one line each:
#   - what zero-offload-state put in host memory (its remarks: the state
#     arguments, and how many of them a loop carries there);
#   - whether the offloaded program gives the bits of the program as given
#     on the GPU lowering's CPU replica, on as many ranks as each mesh has:
#     N = 1, 2, 3, 4, 8 and 2x4 (an example whose mesh is 2-D on its own
#     mesh only; the shard forms after upstream sharding-propagation and
#     shard-partition, at N = 1 to 8);
#   - whether it compiles for CUDA and runs 2 steps on the stand-in driver
#     (FAKE_CUDA) on the example's own mesh.
# A failure prints what the tool said.
set -u
src=$1 fake=$3 dir=$4
PATH=$2:$PATH
mkdir -p "$dir"
passes() { echo "zero-weight-update-sharding{shard-function-boundary offload=$1}"; }

# The mesh's shape as `example` writes it ("2, 4"; "4" for a shard grid).
shapeOf() {
  sed -n 's/^zero.mesh @[a-z_]*(shape = \[\([0-9, ]*\)\]).*/\1/p; s/^shard.grid @[a-z_]*(shape = \([0-9]*\)).*/\1/p' "$1"
}

# `example` on a mesh of `shape` (its own when empty), in the form zero-run
# takes, as DIR/NAME.mlir.
at() {
  local example=$1 shape=$2 name=$3
  if grep -q "^shard.grid" "$example"; then
    sed "${shape:+s/^\(shard.grid @[a-z_]*(shape = \)[0-9]*)/\1$shape)/}" "$example" |
      mlir-opt --convert-elementwise-to-linalg |
      mlir-opt --pass-pipeline='builtin.module(func.func(sharding-propagation,shard-partition),canonicalize)'
  else
    sed "${shape:+s/^\(zero.mesh @[a-z_]*(shape = \)\[[0-9, ]*\])/\1[$shape])/}" "$example"
  fi > "$dir/$name.mlir"
}

for example in "$src"/examples/*.mlir; do
  base=$(basename "$example" .mlir)
  shapes=("1" "2" "3" "4" "8" "2, 4")
  grep -q "^shard.grid" "$example" && shapes=(1 2 3 4 8)
  [[ $(shapeOf "$example") == *,* ]] && shapes=("$(shapeOf "$example")")
  at "$example" "" "$base" || { echo "$base: cannot be partitioned"; continue; }
  for shape in "${shapes[@]}"; do
    at "$example" "$shape" "$base.${shape/, /x}"
  done
  for mode in optimizer params; do
    remarks=$(zero-opt "$dir/$base.mlir" --zero-weight-update-sharding="shard-function-boundary offload=$mode" -o /dev/null 2>&1)
    moved=$(sed -n 's/.*zero-offload-state: \([0-9]* of [0-9]* state arguments\) of .* in host memory.*/\1/p' <<<"$remarks")
    carried=$(grep -c "zero-offload-state: iter_arg .* in host memory" <<<"$remarks")
    line="$base offload=$mode: ${moved:-no remark} in host memory"
    [[ $carried != 0 ]] && line="$line ($carried carried there by a loop)"
    line="$line; bit-identical at N ="
    for shape in "${shapes[@]}"; do
      out=$(zero-run "$dir/$base.${shape/, /x}.mlir" --gpu-loops --gpu-loops-given \
        --equivalent-after="$(passes $mode)" 2>&1)
      # Every result, on as many ranks as the mesh has.
      if grep -q "on every rank within 0 ulp" <<<"$out" &&
          ! grep "bit-identical on" <<<"$out" | grep -vq "on $((${shape//, /*})) rank(s)"; then
        line="$line ${shape/, /x}"
      else
        line="$line [${shape/, /x} DIFFERS: $(tail -3 <<<"$out" | tr '\n' ' ')]"
      fi
    done
    so="$dir/$base.$mode.so"
    if ! out=$(zero-compile --target=cuda --gpu-format=isa "$dir/$base.mlir" \
        --passes="$(passes $mode)" --lowering-options=cublas=false -o "$so" 2>&1); then
      echo "$line; CUDA: FAILED: $(tail -3 <<<"$out" | tr '\n' ' ')"
      continue
    fi
    if out=$(env LD_LIBRARY_PATH="$fake" zero-launch "$so" --generate --steps 2 2>&1); then
      echo "$line; CUDA: compiled, 2 steps on the stand-in"
    else
      echo "$line; CUDA: the stand-in run FAILED: $(tail -3 <<<"$out" | tr '\n' ' ')"
    fi
  done
done
