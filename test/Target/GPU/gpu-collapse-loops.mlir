// RUN: zero-opt %s --zero-gpu-collapse-loops --split-input-file | FileCheck %s

// A 2-D nest becomes one loop over all its iterations; each recovers its
// indices with the last dimension varying fastest (consecutive threads,
// consecutive elements).
// CHECK-LABEL: func.func @two_d
// CHECK: %[[ROWS:[0-9]+]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK: %[[N:[0-9]+]] = arith.muli %[[ROWS]], %[[C13:c13[_0-9]*]] : index
// CHECK: scf.parallel (%[[K:.*]]) = (%{{.*}}) to (%[[N]]) step (%{{.*}}) {
// CHECK:   %[[J:.*]] = arith.remsi %[[K]], %[[C13]] : index
// CHECK:   %[[I:.*]] = arith.divsi %[[K]], %[[C13]] : index
// CHECK:   memref.load %arg0[%[[I]], %[[J]]]
// CHECK:   memref.store %{{.*}}, %arg1[%[[I]], %[[J]]]
// CHECK-NOT: scf.parallel
func.func @two_d(%a: memref<7x13xf32>, %b: memref<7x13xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %c13 = arith.constant 13 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c7, %c13) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<7x13xf32>
    memref.store %x, %b[%i, %j] : memref<7x13xf32>
    scf.reduce
  }
  return
}

// -----

// A nest too long for the grid's y dimension (1 x 6291456: at most 65535
// blocks there) is one dimension of 6291456 iterations.
// CHECK-LABEL: func.func @unit_first
// CHECK: %[[N:[0-9]+]] = arith.muli %{{[0-9]+}}, %[[LONG:c6291456[_0-9]*]] : index
// CHECK: scf.parallel (%[[K:.*]]) = (%{{.*}}) to (%[[N]])
// CHECK:   arith.remsi %[[K]], %[[LONG]]
func.func @unit_first(%a: memref<1x6291456xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 6291456 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c1, %n) step (%c1, %c1) {
    memref.store %zero, %a[%i, %j] : memref<1x6291456xf32>
    scf.reduce
  }
  return
}

// -----

// Left as they are: a 1-D loop, a loop with a reduction result (it is split
// into partial results elsewhere), a loop already mapped to the GPU, and an
// inner loop (its outer one is collapsed).
// CHECK-LABEL: func.func @left
// CHECK: scf.parallel (%{{[^,]*}}) = (%{{[^,]*}}) to (%{{[^,]*}}) step (%{{[^,]*}}) {
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = {{.*}} -> f32
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = {{.*}} {
// CHECK: mapping = [#gpu.loop_dim_map
// CHECK: scf.parallel (%{{[^,]*}}) = (%{{[^,]*}}) to (%{{[^,]*}}) step (%{{[^,]*}}) {
// CHECK:   scf.parallel (%{{.*}}, %{{.*}}) = {{.*}} {
func.func @left(%a: memref<4x4xf32>, %v: memref<16xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c16) step (%c1) {
    memref.store %zero, %v[%i] : memref<16xf32>
    scf.reduce
  }
  %sum = scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c4) step (%c1, %c1) init (%zero) -> f32 {
    %x = memref.load %a[%i, %j] : memref<4x4xf32>
    scf.reduce(%x : f32) {
    ^bb0(%l: f32, %r: f32):
      %s = arith.addf %l, %r : f32
      scf.reduce.return %s : f32
    }
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c4) step (%c1, %c1) {
    memref.store %zero, %a[%i, %j] : memref<4x4xf32>
    scf.reduce
  } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>,
                #gpu.loop_dim_map<processor = block_y, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  scf.parallel (%k) = (%c0) to (%c2) step (%c1) {
    scf.parallel (%i, %j) = (%c0, %c0) to (%c2, %c2) step (%c1, %c1) {
      memref.store %zero, %a[%i, %j] : memref<4x4xf32>
      scf.reduce
    }
    scf.reduce
  }
  return %sum : f32
}
