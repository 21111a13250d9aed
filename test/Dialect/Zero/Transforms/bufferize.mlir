// RUN: zero-opt %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --split-input-file | FileCheck %s

// Each communicating collective writes a fresh buffer, but an all-reduce
// whose input is not read afterwards reduces it in place; shard_slice is a
// view at offset group-index * part size, with no copy.

zero.mesh @dp(shape = [4])

// %g is read after its all-reduce (by the reduce-scatter): the sum goes to
// a buffer of its own, not to a copy of %g.
// CHECK-LABEL: func.func @collectives
// CHECK-SAME: (%[[G:.*]]: memref<1024xf32>, %[[W:.*]]: memref<1024xf32>)
func.func @collectives(%g: tensor<1024xf32>, %w: tensor<1024xf32>)
    -> (tensor<1024xf32>, tensor<1024xf32>) {
  // CHECK-NOT: memref.copy
  // CHECK: %[[SUM:.*]] = memref.alloc() {{.*}} : memref<1024xf32>
  // CHECK: zero.all_reduce_buffer %[[G]], %[[SUM]] on @dp reduce = sum : memref<1024xf32>, memref<1024xf32>
  %a = zero.all_reduce %g on @dp reduce = sum : tensor<1024xf32>
  // CHECK: %[[PART:.*]] = memref.alloc() {{.*}} : memref<256xf32>
  // CHECK: zero.reduce_scatter_buffer %[[G]], %[[PART]] on @dp reduce = mean : memref<1024xf32>, memref<256xf32>
  %s = zero.reduce_scatter %g on @dp reduce = mean : tensor<1024xf32> -> tensor<256xf32>
  // CHECK: %[[IDX:.*]] = zero.replica_index on @dp : index
  // CHECK: %[[OFF:.*]] = arith.muli %[[IDX]], %{{.*}} : index
  // CHECK: %[[VIEW:.*]] = memref.subview %[[W]][%[[OFF]]] [256] [1] : memref<1024xf32> to memref<256xf32, strided<[1], offset: ?>>
  %ws = zero.shard_slice %w on @dp : tensor<1024xf32> -> tensor<256xf32>
  // The sum is written in place, into the view of %w (not read afterwards).
  // CHECK: linalg.add ins(%[[VIEW]], %[[PART]] : {{.*}}) outs(%[[VIEW]] : memref<256xf32, strided<[1], offset: ?>>)
  %n = linalg.add ins(%ws, %s : tensor<256xf32>, tensor<256xf32>)
                  outs(%ws : tensor<256xf32>) -> tensor<256xf32>
  // CHECK: %[[FULL:.*]] = memref.alloc() {{.*}} : memref<1024xf32>
  // CHECK: zero.all_gather_buffer %[[VIEW]], %[[FULL]] on @dp : memref<256xf32, strided<[1], offset: ?>>, memref<1024xf32>
  %f = zero.all_gather %n on @dp : tensor<256xf32> -> tensor<1024xf32>
  // CHECK: return %[[SUM]], %[[FULL]]
  return %a, %f : tensor<1024xf32>, tensor<1024xf32>
}

// -----

// Nothing reads the local gradient after its all-reduce: it is reduced in
// place, with no buffer of its own.

zero.mesh @dp(shape = [4])

// CHECK-LABEL: func.func @in_place
// CHECK-SAME: (%[[G:.*]]: memref<64xf32>, %[[W:.*]]: memref<64xf32>)
// CHECK-NOT: memref.alloc
// CHECK: zero.all_reduce_buffer %[[G]], %[[G]] on @dp reduce = mean : memref<64xf32>, memref<64xf32>
// CHECK-NOT: zero.out_of_place
// CHECK: linalg.sub ins(%[[W]], %[[G]] : memref<64xf32>, memref<64xf32>)
func.func @in_place(%g: tensor<64xf32>, %w: tensor<64xf32>) -> tensor<64xf32> {
  %a = zero.all_reduce %g on @dp reduce = mean : tensor<64xf32>
  %e = tensor.empty() : tensor<64xf32>
  %n = linalg.sub ins(%w, %a : tensor<64xf32>, tensor<64xf32>)
                  outs(%e : tensor<64xf32>) -> tensor<64xf32>
  return %n : tensor<64xf32>
}

// -----

// Group axes and the split dimension carry over.

zero.mesh @hybrid(shape = [2, 4])

// CHECK-LABEL: func.func @scatter_on_an_axis
func.func @scatter_on_an_axis(%g: tensor<8x16xbf16>) -> tensor<8x4xbf16> {
  // CHECK: zero.reduce_scatter_buffer %{{.*}}, %{{.*}} on @hybrid axes = [1] reduce = max dim = 1 : memref<8x16xbf16>, memref<8x4xbf16>
  %s = zero.reduce_scatter %g on @hybrid axes = [1] reduce = max dim = 1
      : tensor<8x16xbf16> -> tensor<8x4xbf16>
  return %s : tensor<8x4xbf16>
}

// -----

// A collective in zero.async starts where the async stands (a buffer op that
// returns a request) and the await waits for it. The await reads the
// collective's input, so a write to that tensor in between goes to a copy:
// the collective may still be reading the original.

zero.mesh @dp(shape = [4])

// CHECK-LABEL: func.func @async_keeps_input
// CHECK-SAME: (%[[G:[^:]+]]: memref<16xf32>
func.func @async_keeps_input(%g: tensor<16xf32>, %c: f32, %i: index)
    -> (tensor<4xf32>, tensor<16xf32>) {
  // CHECK: %[[OUT:.*]] = memref.alloc() {{.*}} : memref<4xf32>
  // CHECK: %[[R:.*]] = zero.reduce_scatter_buffer %[[G]], %[[OUT]] on @dp reduce = sum : memref<16xf32>, memref<4xf32> -> !zero.request
  %f = zero.async : !zero.future<tensor<4xf32>> {
    %s = zero.reduce_scatter %g on @dp reduce = sum : tensor<16xf32> -> tensor<4xf32>
    zero.yield %s : tensor<4xf32>
  }
  // CHECK: %[[COPY:.*]] = memref.alloc() {{.*}} : memref<16xf32>
  // CHECK: memref.copy %[[G]], %[[COPY]]
  // CHECK: memref.store %{{.*}}, %[[COPY]]
  %h = tensor.insert %c into %g[%i] : tensor<16xf32>
  // CHECK: zero.wait %[[R]], %[[G]], %[[OUT]] : memref<16xf32>, memref<4xf32>
  // CHECK-NOT: zero.async
  // CHECK: return %[[OUT]], %[[COPY]]
  %v = zero.await %f reads %g : !zero.future<tensor<4xf32>>, tensor<16xf32>
  return %v, %h : tensor<4xf32>, tensor<16xf32>
}
