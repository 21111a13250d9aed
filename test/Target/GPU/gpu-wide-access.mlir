// zero-gpu-wide-access: a 1-D elementwise loop whose buffers start on
// 16-byte boundaries reads and writes 16 bytes per lane group (V = 16 bytes
// over the widest element); loops it cannot prove safe or aligned stay as
// they are.

// RUN: zero-opt %s --split-input-file --zero-gpu-wide-access --canonicalize | FileCheck %s

// An update with an f32 result and its bf16 copy: V = 4 (16 bytes of f32,
// 8 of bf16); the shard is a view at the rank's offset, a multiple of 4.
// CHECK-LABEL: func.func @update
// CHECK: scf.parallel (%[[J:.*]]) = (%c0) to (%c64) step (%c1) {
// CHECK:   %[[I:.*]] = arith.muli %[[J]], %c4 : index
// CHECK:   %[[W:.*]] = vector.load %{{.*}}[%[[I]]] {alignment = 16 : i64} : memref<256xf32, strided<[1], offset: ?>>, vector<4xf32>
// CHECK:   %[[G:.*]] = vector.load %arg1[%[[I]]] {alignment = 16 : i64} : memref<256xf32>, vector<4xf32>
// CHECK-COUNT-4: arith.subf
// CHECK:   %[[N:.*]] = vector.from_elements {{.*}} : vector<4xf32>
// CHECK:   vector.store %[[N]], %arg2[%[[I]]] {alignment = 16 : i64} : memref<256xf32>, vector<4xf32>
// CHECK:   %[[H:.*]] = vector.from_elements {{.*}} : vector<4xbf16>
// CHECK:   vector.store %[[H]], %arg3[%[[I]]] {alignment = 8 : i64} : memref<256xbf16>, vector<4xbf16>
// CHECK-NOT: memref.load
func.func @update(%whole: memref<1024xf32>, %g: memref<256xf32>, %out: memref<256xf32>,
                  %copy: memref<256xbf16>, %rank: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %lr = arith.constant 0.1 : f32
  %offset = arith.muli %rank, %c256 : index
  %w = memref.subview %whole[%offset] [256] [1] : memref<1024xf32> to memref<256xf32, strided<[1], offset: ?>>
  scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
    %a = memref.load %w[%i] : memref<256xf32, strided<[1], offset: ?>>
    %b = memref.load %g[%i] : memref<256xf32>
    %c = arith.mulf %b, %lr : f32
    %d = arith.subf %a, %c : f32
    memref.store %d, %out[%i] : memref<256xf32>
    %e = arith.truncf %d : f32 to bf16
    memref.store %e, %copy[%i] : memref<256xbf16>
    scf.reduce
  }
  return
}

// -----

// Left alone: 23 elements (not a multiple of 4); a view at offset 2 (not on
// a 16-byte boundary); a view at the rank's offset times 23; an access at
// another index; a load after a store to the same buffer; control flow; an
// i1 mask (not a whole number of bytes).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: vector.
// CHECK-COUNT-7: scf.parallel
// CHECK-NOT: vector.
func.func @left_alone(%a: memref<23xf32>, %b: memref<64xf32>, %c: memref<64xf32>, %rank: index,
                      %mask: memref<64xi1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c23 = arith.constant 23 : index
  %c60 = arith.constant 60 : index
  %z = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c23) step (%c1) {
    memref.store %z, %a[%i] : memref<23xf32>
    scf.reduce
  }
  %odd = memref.subview %b[2] [60] [1] : memref<64xf32> to memref<60xf32, strided<[1], offset: 2>>
  scf.parallel (%i) = (%c0) to (%c60) step (%c1) {
    memref.store %z, %odd[%i] : memref<60xf32, strided<[1], offset: 2>>
    scf.reduce
  }
  %offset = arith.muli %rank, %c23 : index
  %shard = memref.subview %b[%offset] [8] [1] : memref<64xf32> to memref<8xf32, strided<[1], offset: ?>>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %z, %shard[%i] : memref<8xf32, strided<[1], offset: ?>>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %j = arith.addi %i, %c1 : index
    %x = memref.load %b[%j] : memref<64xf32>
    memref.store %x, %c[%i] : memref<64xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %z, %c[%i] : memref<64xf32>
    %x = memref.load %c[%i] : memref<64xf32>
    memref.store %x, %b[%i] : memref<64xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %x = memref.load %b[%i] : memref<64xf32>
    %p = arith.cmpf ogt, %x, %z : f32
    scf.if %p {
      memref.store %x, %c[%i] : memref<64xf32>
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %x = memref.load %b[%i] : memref<64xf32>
    %p = arith.cmpf ogt, %x, %z : f32
    memref.store %p, %mask[%i] : memref<64xi1>
    scf.reduce
  }
  return
}
