// Every op in its custom form round-trips, and the generic form parses back
// to the same custom form.
// RUN: zero-opt %s --split-input-file | zero-opt --split-input-file | FileCheck %s
// RUN: zero-opt %s --split-input-file --mlir-print-op-generic | zero-opt --split-input-file | FileCheck %s

// CHECK: zero.mesh @dp(shape = [8])
// CHECK: zero.mesh @hybrid(shape = [2, 4])
zero.mesh @dp(shape = [8])
zero.mesh @hybrid(shape = [2, 4])

// CHECK-LABEL: func.func @all_reduce
func.func @all_reduce(%g: tensor<1000x512xf32>, %n: tensor<f64>, %i: tensor<3xi32>, %h: tensor<7xbf16>)
    -> (tensor<1000x512xf32>, tensor<f64>, tensor<3xi32>, tensor<7xbf16>) {
  // CHECK: zero.all_reduce %{{.*}} on @dp reduce = sum : tensor<1000x512xf32>
  %0 = zero.all_reduce %g on @dp reduce = sum : tensor<1000x512xf32>
  // CHECK: zero.all_reduce %{{.*}} on @hybrid axes = [0] reduce = max : tensor<f64>
  %1 = zero.all_reduce %n on @hybrid axes = [0] reduce = max : tensor<f64>
  // CHECK: zero.all_reduce %{{.*}} on @hybrid axes = [1, 0] reduce = min : tensor<3xi32>
  %2 = zero.all_reduce %i on @hybrid axes = [1, 0] reduce = min : tensor<3xi32>
  // CHECK: zero.all_reduce %{{.*}} on @dp reduce = mean : tensor<7xbf16>
  %3 = zero.all_reduce %h on @dp reduce = mean : tensor<7xbf16>
  return %0, %1, %2, %3 : tensor<1000x512xf32>, tensor<f64>, tensor<3xi32>, tensor<7xbf16>
}

// CHECK-LABEL: func.func @reduce_scatter
func.func @reduce_scatter(%g: tensor<512000xf32>, %m: tensor<4x64xf32>, %d: tensor<?xf32>)
    -> (tensor<64000xf32>, tensor<4x16xf32>, tensor<?xf32>) {
  // CHECK: zero.reduce_scatter %{{.*}} on @dp reduce = sum : tensor<512000xf32> -> tensor<64000xf32>
  %0 = zero.reduce_scatter %g on @dp reduce = sum : tensor<512000xf32> -> tensor<64000xf32>
  // CHECK: zero.reduce_scatter %{{.*}} on @hybrid axes = [1] reduce = mean dim = 1 : tensor<4x64xf32> -> tensor<4x16xf32>
  %1 = zero.reduce_scatter %m on @hybrid axes = [1] reduce = mean dim = 1 : tensor<4x64xf32> -> tensor<4x16xf32>
  // Dynamic sizes are checked at run time.
  // CHECK: zero.reduce_scatter %{{.*}} on @dp reduce = sum : tensor<?xf32> -> tensor<?xf32>
  %2 = zero.reduce_scatter %d on @dp reduce = sum : tensor<?xf32> -> tensor<?xf32>
  return %0, %1, %2 : tensor<64000xf32>, tensor<4x16xf32>, tensor<?xf32>
}

// CHECK-LABEL: func.func @all_gather_and_shard_slice
func.func @all_gather_and_shard_slice(%s: tensor<64000xbf16>, %w: tensor<6x8xf32>)
    -> (tensor<512000xbf16>, tensor<3x8xf32>, tensor<6x8xf32>) {
  // CHECK: zero.all_gather %{{.*}} on @dp : tensor<64000xbf16> -> tensor<512000xbf16>
  %0 = zero.all_gather %s on @dp : tensor<64000xbf16> -> tensor<512000xbf16>
  // The default dimension 0 is not printed.
  // CHECK: zero.shard_slice %{{.*}} on @hybrid axes = [0] : tensor<6x8xf32> -> tensor<3x8xf32>
  %1 = zero.shard_slice %w on @hybrid axes = [0] dim = 0 : tensor<6x8xf32> -> tensor<3x8xf32>
  // CHECK: zero.all_gather %{{.*}} on @hybrid axes = [0] : tensor<3x8xf32> -> tensor<6x8xf32>
  %2 = zero.all_gather %1 on @hybrid axes = [0] dim = 0 : tensor<3x8xf32> -> tensor<6x8xf32>
  return %0, %1, %2 : tensor<512000xbf16>, tensor<3x8xf32>, tensor<6x8xf32>
}

// CHECK-LABEL: func.func @replica_index
func.func @replica_index() -> (index, index) {
  // CHECK: zero.replica_index on @dp : index
  %0 = zero.replica_index on @dp : index
  // CHECK: zero.replica_index on @hybrid axes = [1] : index
  %1 = zero.replica_index on @hybrid axes = [1] : index
  return %0, %1 : index, index
}

// CHECK-LABEL: func.func @async_await
func.func @async_await(%g: tensor<512000xf32>) -> tensor<64000xf32> {
  // CHECK: %[[F:.*]] = zero.async : !zero.future<tensor<64000xf32>> {
  // CHECK-NEXT:   %[[S:.*]] = zero.reduce_scatter %{{.*}} on @dp reduce = sum : tensor<512000xf32> -> tensor<64000xf32>
  // CHECK-NEXT:   zero.yield %[[S]] : tensor<64000xf32>
  // CHECK-NEXT: }
  // CHECK: zero.await %[[F]] reads %{{.*}} : !zero.future<tensor<64000xf32>>, tensor<512000xf32>
  %f = zero.async : !zero.future<tensor<64000xf32>> {
    %s = zero.reduce_scatter %g on @dp reduce = sum : tensor<512000xf32> -> tensor<64000xf32>
    zero.yield %s : tensor<64000xf32>
  }
  %v = zero.await %f reads %g : !zero.future<tensor<64000xf32>>, tensor<512000xf32>
  return %v : tensor<64000xf32>
}

// -----

// A mesh nested in a module is found from inside it.
// CHECK-LABEL: module @inner
module @inner {
  zero.mesh @m(shape = [3])
  // CHECK: zero.all_gather %{{.*}} on @m : tensor<2xi64> -> tensor<6xi64>
  func.func @f(%x: tensor<2xi64>) -> tensor<6xi64> {
    %0 = zero.all_gather %x on @m : tensor<2xi64> -> tensor<6xi64>
    return %0 : tensor<6xi64>
  }
}

// -----

// The bufferized (destination-passing) forms.
zero.mesh @hybrid(shape = [2, 4])

// CHECK-LABEL: func.func @buffers
func.func @buffers(%g: memref<1024xf32>, %s: memref<256xf32>,
                   %v: memref<256xf32, strided<[1], offset: ?>>,
                   %h: memref<8x16xbf16>, %hs: memref<8x4xbf16>) {
  // CHECK: zero.all_reduce_buffer %{{.*}}, %{{.*}} on @hybrid reduce = mean : memref<1024xf32>, memref<1024xf32>
  zero.all_reduce_buffer %g, %g on @hybrid reduce = mean : memref<1024xf32>, memref<1024xf32>
  // CHECK: zero.reduce_scatter_buffer %{{.*}}, %{{.*}} on @hybrid axes = [1] reduce = sum : memref<1024xf32>, memref<256xf32>
  zero.reduce_scatter_buffer %g, %s on @hybrid axes = [1] reduce = sum : memref<1024xf32>, memref<256xf32>
  // CHECK: zero.reduce_scatter_buffer %{{.*}}, %{{.*}} on @hybrid axes = [1] reduce = min dim = 1 : memref<8x16xbf16>, memref<8x4xbf16>
  zero.reduce_scatter_buffer %h, %hs on @hybrid axes = [1] reduce = min dim = 1 : memref<8x16xbf16>, memref<8x4xbf16>
  // CHECK: zero.all_gather_buffer %{{.*}}, %{{.*}} on @hybrid axes = [1] : memref<256xf32, strided<[1], offset: ?>>, memref<1024xf32>
  zero.all_gather_buffer %v, %g on @hybrid axes = [1] : memref<256xf32, strided<[1], offset: ?>>, memref<1024xf32>
  return
}

// -----

// A future carried round a loop: made ready before it, awaited in the body
// and after it without `reads`; a request with nothing in flight.
zero.mesh @dp(shape = [4])

// CHECK-LABEL: func.func @carried_future
// CHECK: %[[F0:.*]] = zero.ready %{{.*}} : tensor<16xf32>
// CHECK: scf.for {{.*}} iter_args(%[[F:.*]] = %[[F0]]) -> (!zero.future<tensor<16xf32>>)
// CHECK: zero.await %[[F]] : !zero.future<tensor<16xf32>>
// CHECK: zero.completed_request
func.func @carried_future(%w0: tensor<16xf32>, %s: tensor<4xf32>) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %f0 = zero.ready %w0 : tensor<16xf32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%f = %f0) -> (!zero.future<tensor<16xf32>>) {
    %w = zero.await %f : !zero.future<tensor<16xf32>>
    %f2 = zero.async : !zero.future<tensor<16xf32>> {
      %g = zero.all_gather %s on @dp : tensor<4xf32> -> tensor<16xf32>
      zero.yield %g : tensor<16xf32>
    }
    scf.yield %f2 : !zero.future<tensor<16xf32>>
  }
  %w = zero.await %r : !zero.future<tensor<16xf32>>
  %none = zero.completed_request
  return %w : tensor<16xf32>
}

// -----

// CHECK-LABEL: func.func @block_quantization
// CHECK: %[[Q:.*]], %[[S:.*]] = zero.quantize %{{.*}} block = 4096 : tensor<3x5000xf32> -> tensor<3x5000xi8>, tensor<3x2xf32>
// CHECK: zero.dequantize %[[Q]], %[[S]] block = 4096 : tensor<3x5000xi8>, tensor<3x2xf32> -> tensor<3x5000xbf16>
func.func @block_quantization(%w: tensor<3x5000xf32>) -> tensor<3x5000xbf16> {
  %q, %s = zero.quantize %w block = 4096 : tensor<3x5000xf32> -> tensor<3x5000xi8>, tensor<3x2xf32>
  %d = zero.dequantize %q, %s block = 4096 : tensor<3x5000xi8>, tensor<3x2xf32> -> tensor<3x5000xbf16>
  return %d : tensor<3x5000xbf16>
}

// -----

// 4-bit levels, two a byte: 5000 floats a row take 2500 bytes.
// CHECK-LABEL: func.func @int4_quantization
// CHECK: %[[Q:.*]], %[[S:.*]] = zero.quantize %{{.*}} block = 4096 bits = 4 : tensor<3x5000xf32> -> tensor<3x2500xi8>, tensor<3x2xf32>
// CHECK: zero.dequantize %[[Q]], %[[S]] block = 4096 bits = 4 : tensor<3x2500xi8>, tensor<3x2xf32> -> tensor<3x5000xf32>
func.func @int4_quantization(%w: tensor<3x5000xf32>) -> tensor<3x5000xf32> {
  %q, %s = zero.quantize %w block = 4096 bits = 4 : tensor<3x5000xf32> -> tensor<3x2500xi8>, tensor<3x2xf32>
  %d = zero.dequantize %q, %s block = 4096 bits = 4 : tensor<3x2500xi8>, tensor<3x2xf32> -> tensor<3x5000xf32>
  return %d : tensor<3x5000xf32>
}

// -----

zero.mesh @hybrid(shape = [2, 4])
// CHECK-LABEL: func.func @all_to_all
func.func @all_to_all(%q: tensor<8x64xi8>, %s: tensor<4x3xf32>,
                      %a: memref<8x64xi8>, %b: memref<8x64xi8>) -> (tensor<8x64xi8>, tensor<4x3xf32>) {
  // CHECK: zero.all_to_all %{{.*}} on @hybrid : tensor<8x64xi8>
  %0 = zero.all_to_all %q on @hybrid : tensor<8x64xi8>
  // CHECK: zero.all_to_all %{{.*}} on @hybrid axes = [1] : tensor<4x3xf32>
  %1 = zero.all_to_all %s on @hybrid axes = [1] : tensor<4x3xf32>
  // CHECK: zero.all_to_all_buffer %{{.*}}, %{{.*}} on @hybrid : memref<8x64xi8>, memref<8x64xi8>
  zero.all_to_all_buffer %a, %b on @hybrid : memref<8x64xi8>, memref<8x64xi8>
  // CHECK: zero.all_to_all_buffer %{{.*}}, %{{.*}} on @hybrid axes = [0] : memref<8x64xi8>, memref<8x64xi8> -> !zero.request
  %r = zero.all_to_all_buffer %a, %b on @hybrid axes = [0] : memref<8x64xi8>, memref<8x64xi8> -> !zero.request
  zero.wait %r, %a, %b : memref<8x64xi8>, memref<8x64xi8>
  return %0, %1 : tensor<8x64xi8>, tensor<4x3xf32>
}
