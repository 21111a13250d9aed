#!/bin/bash
# offload-examples.sh SRC BIN FAKE_CUDA DIR: every example under
# SRC/examples, run by zero's tools in BIN (mlir-opt from PATH),
# with offload=optimizer and with offload=params, one line each:
#   - what zero-offload-state put in host memory (its remark);
#   - whether the offloaded program gives the bits of the program as given
#     on the GPU lowering's CPU replica, at N = 1, 2, 3, 4, 8 and 2x4 (the
#     example's own mesh for one already 2-D; the shard forms after upstream
#     sharding-propagation and shard-partition, at N = 1 to 8);
#   - whether it compiles for CUDA and runs 2 steps on the stand-in driver
#     (FAKE_CUDA) at the example's own mesh.
# A failure prints what the tool said.
set -u
src=$1 fake=$3 dir=$4
PATH=$2:$PATH
mkdir -p "$dir"
passes() { echo "zero-weight-update-sharding{shard-function-boundary offload=$1}"; }

# The example at `shape` (the text inside the mesh's brackets or after the
# grid's "shape ="), in the form zero-run takes.
at() {
  local example=$1 shape=$2 name=$3
  if grep -q "shard.grid" "$example"; then
    sed "s/shape = [0-9x]*)/shape = $shape)/" "$example" |
      mlir-opt --convert-elementwise-to-linalg |
      mlir-opt --pass-pipeline='builtin.module(func.func(sharding-propagation,shard-partition),canonicalize)' \
        > "$dir/$name.mlir"
  else
    sed "s/zero.mesh @dp(shape = \[[0-9]*\])/zero.mesh @dp(shape = [$shape])/" \
      "$example" > "$dir/$name.mlir"
  fi
}

for example in "$src"/examples/*.mlir; do
  base=$(basename "$example" .mlir)
  shapes=("1" "2" "3" "4" "8" "2, 4")
  grep -q "shard.grid" "$example" && shapes=(1 2 3 4 8)
  grep -q "zero.mesh @dp(shape = \[[0-9]*, " "$example" && shapes=(own)
  for mode in optimizer params; do
    line="$base offload=$mode:"
    at "$example" 4 "$base.own" || { echo "$line cannot be partitioned"; continue; }
    [ "${shapes[0]}" = own ] && cp "$example" "$dir/$base.own.mlir"
    moved=$(zero-opt "$dir/$base.own.mlir" --zero-weight-update-sharding="shard-function-boundary offload=$mode" -o /dev/null 2>&1 |
      sed -n 's/.*zero-offload-state: \([0-9]* of [0-9]* state arguments\) of .* in host memory.*/\1/p')
    line="$line ${moved:-no remark} in host memory; bit-identical at N ="
    for shape in "${shapes[@]}"; do
      name="$base.$mode.${shape/, /x}"
      if [ "$shape" = own ]; then
        cp "$example" "$dir/$name.mlir"
      else
        at "$example" "$shape" "$name"
      fi
      out=$(zero-run "$dir/$name.mlir" --gpu-loops --gpu-loops-given \
        --equivalent-after="$(passes $mode)" 2>&1)
      if grep -q "on every rank within 0 ulp" <<<"$out"; then
        line="$line ${shape/, /x}"
      else
        line="$line [${shape/, /x} DIFFERS: $(tail -3 <<<"$out" | tr '\n' ' ')]"
      fi
    done
    so="$dir/$base.$mode.so"
    if ! out=$(zero-compile --target=cuda --gpu-format=isa "$dir/$base.own.mlir" \
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
