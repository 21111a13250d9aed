// Every verifier error, at its op.
// RUN: zero-opt %s --split-input-file --verify-diagnostics

// expected-error @+1 {{'zero.mesh' op shape must have at least one axis}}
zero.mesh @m(shape = [])

// -----

// expected-error @+1 {{'zero.mesh' op axis 1 has size 0; sizes must be positive}}
zero.mesh @m(shape = [2, 0])

// -----

func.func @unknown_mesh(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'zero.all_reduce' op refers to unknown mesh @nowhere}}
  %0 = zero.all_reduce %x on @nowhere reduce = sum : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @not_a_mesh(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'zero.all_reduce' op refers to unknown mesh @not_a_mesh}}
  %0 = zero.all_reduce %x on @not_a_mesh reduce = sum : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

zero.mesh @m(shape = [2, 4])
func.func @axis_out_of_range(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'zero.all_reduce' op mesh axis 2 is out of range for mesh @m with 2 axes}}
  %0 = zero.all_reduce %x on @m axes = [2] reduce = sum : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

zero.mesh @m(shape = [2, 4])
func.func @axis_twice(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'zero.all_reduce' op mesh axis 1 is named twice}}
  %0 = zero.all_reduce %x on @m axes = [1, 1] reduce = sum : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

zero.mesh @m(shape = [2, 4])
func.func @negative_axis() -> index {
  // expected-error @+1 {{'zero.replica_index' op mesh axis -1 is negative}}
  %0 = zero.replica_index on @m axes = [-1] : index
  return %0 : index
}

// -----

zero.mesh @m(shape = [2, 4])
func.func @no_axes(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'zero.all_reduce' op axes must name at least one mesh axis; omit 'axes' for the whole mesh}}
  %0 = zero.all_reduce %x on @m axes = [] reduce = sum : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

zero.mesh @m(shape = [2])
func.func @replica_index_unknown_mesh() -> index {
  // expected-error @+1 {{'zero.replica_index' op refers to unknown mesh @other}}
  %0 = zero.replica_index on @other : index
  return %0 : index
}

// -----

zero.mesh @m(shape = [2])
func.func @mean_of_integers(%x: tensor<8xi32>) -> tensor<8xi32> {
  // expected-error @+1 {{'zero.all_reduce' op cannot reduce elements of type 'i32' with 'mean'}}
  %0 = zero.all_reduce %x on @m reduce = mean : tensor<8xi32>
  return %0 : tensor<8xi32>
}

// -----

zero.mesh @m(shape = [2])
func.func @sum_of_booleans(%x: tensor<8xi1>) -> tensor<8xi1> {
  // expected-error @+1 {{'zero.all_reduce' op cannot reduce elements of type 'i1' with 'sum'}}
  %0 = zero.all_reduce %x on @m reduce = sum : tensor<8xi1>
  return %0 : tensor<8xi1>
}

// -----

zero.mesh @m(shape = [2])
func.func @reduce_index(%x: tensor<8xindex>) -> tensor<4xindex> {
  // expected-error @+1 {{'zero.reduce_scatter' op cannot reduce elements of type 'index' with 'max'}}
  %0 = zero.reduce_scatter %x on @m reduce = max : tensor<8xindex> -> tensor<4xindex>
  return %0 : tensor<4xindex>
}

// -----

zero.mesh @m(shape = [2])
func.func @unknown_reduction(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{unknown reduction 'prod' (expected sum, mean, max or min)}}
  %0 = zero.all_reduce %x on @m reduce = prod : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

zero.mesh @m(shape = [2])
func.func @all_reduce_types(%x: tensor<8xf32>) -> tensor<8xf16> {
  // expected-error @+1 {{'zero.all_reduce' op requires the same type for all operands and results}}
  %0 = "zero.all_reduce"(%x) <{mesh = @m, reduction = #zero<reduction sum>}> : (tensor<8xf32>) -> tensor<8xf16>
  return %0 : tensor<8xf16>
}

// -----

zero.mesh @m(shape = [3])
func.func @scatter_size(%x: tensor<8xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'zero.reduce_scatter' op input dimension 0 is 8, expected result's 2 times the group size 3}}
  %0 = zero.reduce_scatter %x on @m reduce = sum : tensor<8xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

zero.mesh @m(shape = [2, 4])
func.func @scatter_other_dim(%x: tensor<8x3xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'zero.reduce_scatter' op input and result differ in dimension 1: 3 and 4}}
  %0 = zero.reduce_scatter %x on @m axes = [1] reduce = sum : tensor<8x3xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

zero.mesh @m(shape = [2])
func.func @scatter_dim_range(%x: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'zero.reduce_scatter' op scatter dimension 1 is out of range for a tensor of rank 1}}
  %0 = zero.reduce_scatter %x on @m reduce = sum dim = 1 : tensor<8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

zero.mesh @m(shape = [2])
func.func @scatter_element_type(%x: tensor<8xf32>) -> tensor<4xbf16> {
  // expected-error @+1 {{'zero.reduce_scatter' op element types differ: 'f32' and 'bf16'}}
  %0 = zero.reduce_scatter %x on @m reduce = sum : tensor<8xf32> -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

zero.mesh @m(shape = [2])
func.func @scatter_rank(%x: tensor<8xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{'zero.reduce_scatter' op input and result ranks differ: 1 and 2}}
  %0 = zero.reduce_scatter %x on @m reduce = sum : tensor<8xf32> -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

zero.mesh @m(shape = [2, 4])
func.func @gather_size(%x: tensor<3xf32>) -> tensor<6xf32> {
  // expected-error @+1 {{'zero.all_gather' op result dimension 0 is 6, expected input's 3 times the group size 8}}
  %0 = zero.all_gather %x on @m : tensor<3xf32> -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

zero.mesh @m(shape = [2])
func.func @gather_scalar(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'zero.all_gather' op gather dimension 0 is out of range for a tensor of rank 0}}
  %0 = zero.all_gather %x on @m : tensor<f32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

zero.mesh @m(shape = [4])
func.func @slice_size(%x: tensor<8x2xf32>) -> tensor<8x1xf32> {
  // expected-error @+1 {{'zero.shard_slice' op input dimension 1 is 2, expected result's 1 times the group size 4}}
  %0 = zero.shard_slice %x on @m dim = 1 : tensor<8x2xf32> -> tensor<8x1xf32>
  return %0 : tensor<8x1xf32>
}

// -----

zero.mesh @m(shape = [4])
func.func @slice_dim_range(%x: tensor<8xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'zero.shard_slice' op dimension -1 is out of range for a tensor of rank 1}}
  %0 = zero.shard_slice %x on @m dim = -1 : tensor<8xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

zero.mesh @m(shape = [2])
func.func @async_two_ops(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'zero.async' op body must hold exactly one collective and its 'zero.yield'}}
  %f = zero.async : !zero.future<tensor<8xf32>> {
    %a = zero.all_reduce %x on @m reduce = sum : tensor<8xf32>
    %b = zero.all_reduce %a on @m reduce = sum : tensor<8xf32>
    zero.yield %b : tensor<8xf32>
  }
  %v = zero.await %f reads %x : !zero.future<tensor<8xf32>>, tensor<8xf32>
  return %v : tensor<8xf32>
}

// -----

zero.mesh @m(shape = [2])
func.func @async_not_collective(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'zero.async' op body must hold exactly one collective and its 'zero.yield'}}
  %f = zero.async : !zero.future<tensor<8xf32>> {
    %a = arith.addf %x, %x : tensor<8xf32>
    zero.yield %a : tensor<8xf32>
  }
  %v = zero.await %f reads %x : !zero.future<tensor<8xf32>>, tensor<8xf32>
  return %v : tensor<8xf32>
}

// -----

zero.mesh @m(shape = [2])
func.func @async_yields_other(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'zero.async' op must yield the result of its collective}}
  %f = zero.async : !zero.future<tensor<8xf32>> {
    %a = zero.all_reduce %x on @m reduce = sum : tensor<8xf32>
    zero.yield %x : tensor<8xf32>
  }
  %v = zero.await %f reads %x : !zero.future<tensor<8xf32>>, tensor<8xf32>
  return %v : tensor<8xf32>
}

// -----

zero.mesh @m(shape = [2])
func.func @async_type(%x: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'zero.async' op yields 'tensor<8xf32>' but its future holds 'tensor<4xf32>'}}
  %f = zero.async : !zero.future<tensor<4xf32>> {
    %a = zero.all_reduce %x on @m reduce = sum : tensor<8xf32>
    zero.yield %a : tensor<8xf32>
  }
  %v = zero.await %f reads %x : !zero.future<tensor<4xf32>>, tensor<8xf32>
  return %v : tensor<4xf32>
}

// -----

zero.mesh @m(shape = [2])
func.func @awaited_twice(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'zero.async' op future is awaited 2 times; at most once}}
  %f = zero.async : !zero.future<tensor<8xf32>> {
    %a = zero.all_reduce %x on @m reduce = sum : tensor<8xf32>
    zero.yield %a : tensor<8xf32>
  }
  %v = zero.await %f reads %x : !zero.future<tensor<8xf32>>, tensor<8xf32>
  %w = zero.await %f reads %x : !zero.future<tensor<8xf32>>, tensor<8xf32>
  return %v : tensor<8xf32>
}

// -----

zero.mesh @m(shape = [2])
func.func @yield_outside_async(%x: tensor<8xf32>) {
  // expected-error @+1 {{'zero.yield' op expects parent op 'zero.async'}}
  zero.yield %x : tensor<8xf32>
}

// -----

// expected-error @+1 {{future value must be a ranked tensor, got 'f32'}}
func.func @future_of_scalar(%f: !zero.future<f32>)

// -----

zero.mesh @m(shape = [2])
func.func @await_type(%f: !zero.future<tensor<8xf32>>, %x: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'zero.await' op failed to verify that result type is the future's value type}}
  %v = "zero.await"(%f, %x) : (!zero.future<tensor<8xf32>>, tensor<8xf32>) -> tensor<4xf32>
  return %v : tensor<4xf32>
}

// -----

zero.mesh @m(shape = [2])
func.func @await_reads_other(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %f = zero.async : !zero.future<tensor<8xf32>> {
    %r = zero.all_reduce %x on @m reduce = sum : tensor<8xf32>
    zero.yield %r : tensor<8xf32>
  }
  // expected-error @+1 {{'zero.await' op must read its collective's input (<block argument> of type 'tensor<8xf32>' at index: 0), which the collective reads until the await}}
  %v = zero.await %f reads %y : !zero.future<tensor<8xf32>>, tensor<8xf32>
  return %v : tensor<8xf32>
}

// -----

zero.mesh @m(shape = [2])
func.func @wait_other_buffers(%a: memref<8xf32>, %b: memref<4xf32>, %c: memref<4xf32>) {
  %r = zero.reduce_scatter_buffer %a, %b on @m reduce = sum : memref<8xf32>, memref<4xf32> -> !zero.request
  // expected-error @+1 {{'zero.wait' op must name the input and output buffers of the collective that started the request}}
  zero.wait %r, %a, %c : memref<8xf32>, memref<4xf32>
  return
}

// -----

func.func @unranked(%x: tensor<*xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'zero.all_reduce' op operand #0 must be ranked tensor of any type values}}
  %0 = "zero.all_reduce"(%x) <{mesh = @m, reduction = #zero<reduction sum>}> : (tensor<*xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

zero.mesh @m(shape = [2])
func.func @async_no_yield(%x: tensor<8xf32>) {
  // expected-error @+1 {{'zero.async' op body must end with 'zero.yield'}}
  %f = zero.async : !zero.future<tensor<8xf32>> {
    %a = zero.all_reduce %x on @m reduce = sum : tensor<8xf32>
  }
  return
}

// -----

func.func @async_empty() {
  // expected-error @+1 {{'zero.async' op expects a non-empty block}}
  %f = zero.async : !zero.future<tensor<8xf32>> {
  }
  return
}

// -----

zero.mesh @dp(shape = [4])

func.func @all_reduce_buffer_shapes(%a: memref<8xf32>, %b: memref<4xf32>) {
  // expected-error @+1 {{input and output differ in shape or element type: 'memref<8xf32>' and 'memref<4xf32>'}}
  zero.all_reduce_buffer %a, %b on @dp reduce = sum : memref<8xf32>, memref<4xf32>
  return
}

// -----

zero.mesh @dp(shape = [4])

func.func @reduce_scatter_buffer_size(%a: memref<8xf32>, %b: memref<4xf32>) {
  // expected-error @+1 {{input dimension 0 is 8, expected output's 4 times the group size 4}}
  zero.reduce_scatter_buffer %a, %b on @dp reduce = sum : memref<8xf32>, memref<4xf32>
  return
}

// -----

zero.mesh @dp(shape = [4])

func.func @all_gather_buffer_dim(%a: memref<2xf32>, %b: memref<8xf32>) {
  // expected-error @+1 {{gather dimension 1 is out of range for a memref of rank 1}}
  zero.all_gather_buffer %a, %b on @dp dim = 1 : memref<2xf32>, memref<8xf32>
  return
}

// -----

func.func @buffer_unknown_mesh(%a: memref<2xf32>, %b: memref<8xf32>) {
  // expected-error @+1 {{refers to unknown mesh @nowhere}}
  zero.all_gather_buffer %a, %b on @nowhere : memref<2xf32>, memref<8xf32>
  return
}

// -----

zero.mesh @dp(shape = [4])

func.func @buffer_mean_of_integers(%a: memref<8xi32>) {
  // expected-error @+1 {{cannot reduce elements of type 'i32' with 'mean'}}
  zero.all_reduce_buffer %a, %a on @dp reduce = mean : memref<8xi32>, memref<8xi32>
  return
}

// -----

// Only the await of a zero.async names the collective's input.
func.func @ready_await_reads(%x: tensor<8xf32>) -> tensor<8xf32> {
  %f = zero.ready %x : tensor<8xf32>
  // expected-error @+1 {{'zero.await' op reads an input only when its future comes from a zero.async}}
  %v = zero.await %f reads %x : !zero.future<tensor<8xf32>>, tensor<8xf32>
  return %v : tensor<8xf32>
}

// -----

zero.mesh @m(shape = [2])
func.func @async_await_without_reads(%x: tensor<8xf32>) -> tensor<8xf32> {
  %f = zero.async : !zero.future<tensor<8xf32>> {
    %a = zero.all_reduce %x on @m reduce = sum : tensor<8xf32>
    zero.yield %a : tensor<8xf32>
  }
  // expected-error @+1 {{'zero.await' op must read its collective's input}}
  %v = zero.await %f : !zero.future<tensor<8xf32>>
  return %v : tensor<8xf32>
}

// -----

func.func @quantize_values_shape(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'zero.quantize' op has values of shape 'tensor<2x7xi8>' for floats 'tensor<2x8xf32>' at 8 bits: they must be 'tensor<2x8xi8>'}}
  %q, %s = zero.quantize %x block = 4 : tensor<2x8xf32> -> tensor<2x7xi8>, tensor<2x2xf32>
  return
}

// -----

// 4-bit levels go two a byte: 9 floats take 5 bytes.
func.func @quantize_int4_values_shape(%x: tensor<2x9xf32>) {
  // expected-error @+1 {{'zero.quantize' op has values of shape 'tensor<2x9xi8>' for floats 'tensor<2x9xf32>' at 4 bits: they must be 'tensor<2x5xi8>'}}
  %q, %s = zero.quantize %x block = 4 bits = 4 : tensor<2x9xf32> -> tensor<2x9xi8>, tensor<2x3xf32>
  return
}

// -----

func.func @quantize_int4_odd_block(%x: tensor<10xf32>) {
  // expected-error @+1 {{'zero.quantize' op has 4-bit levels in blocks of 5: a block must be even, so that no byte holds two blocks' levels}}
  %q, %s = zero.quantize %x block = 5 bits = 4 : tensor<10xf32> -> tensor<5xi8>, tensor<2xf32>
  return
}

// -----

func.func @dequantize_bits(%q: tensor<8xi8>, %s: tensor<2xf32>) {
  // expected-error @+1 {{'zero.dequantize' op has 3 bits a level: 8 or 4 only}}
  %x = zero.dequantize %q, %s block = 4 bits = 3 : tensor<8xi8>, tensor<2xf32> -> tensor<8xf32>
  return
}

// -----

func.func @quantize_scales_shape(%x: tensor<2x9xf32>) {
  // expected-error @+1 {{'zero.quantize' op has scales 'tensor<2x2xf32>', but blocks of 4 in 'tensor<2x9xf32>' need 'tensor<2x3xf32>'}}
  %q, %s = zero.quantize %x block = 4 : tensor<2x9xf32> -> tensor<2x9xi8>, tensor<2x2xf32>
  return
}

// -----

func.func @quantize_dynamic(%x: tensor<?xf32>) {
  // expected-error @+1 {{'zero.quantize' op needs static shapes}}
  %q, %s = zero.quantize %x block = 4 : tensor<?xf32> -> tensor<?xi8>, tensor<?xf32>
  return
}

// -----

func.func @quantize_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{'zero.quantize' op needs a tensor of rank 1 or more: its blocks split the last dimension}}
  %q, %s = zero.quantize %x block = 4 : tensor<f32> -> tensor<i8>, tensor<f32>
  return
}

// -----

func.func @quantize_block_zero(%x: tensor<8xf32>) {
  // expected-error @+1 {{'zero.quantize' op attribute 'block' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %q, %s = zero.quantize %x block = 0 : tensor<8xf32> -> tensor<8xi8>, tensor<2xf32>
  return
}

// -----

func.func @dequantize_scales_shape(%q: tensor<8xi8>, %s: tensor<3xf32>) {
  // expected-error @+1 {{'zero.dequantize' op has scales 'tensor<3xf32>', but blocks of 4 in 'tensor<8xbf16>' need 'tensor<2xf32>'}}
  %w = zero.dequantize %q, %s block = 4 : tensor<8xi8>, tensor<3xf32> -> tensor<8xbf16>
  return
}

// -----

func.func @dequantize_values_type(%q: tensor<8xi16>, %s: tensor<2xf32>) {
  // expected-error @+1 {{'zero.dequantize' op operand #0 must be ranked tensor of 8-bit signless integer values}}
  %w = zero.dequantize %q, %s block = 4 : tensor<8xi16>, tensor<2xf32> -> tensor<8xf32>
  return
}

// -----

zero.mesh @m(shape = [3])
func.func @all_to_all_parts(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{'zero.all_to_all' op dimension 0 of 'tensor<4x2xf32>' does not split into the group's 3 parts}}
  %0 = zero.all_to_all %x on @m : tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

zero.mesh @m(shape = [2])
func.func @all_to_all_scalar(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'zero.all_to_all' op splits dimension 0, but its input is a scalar}}
  %0 = zero.all_to_all %x on @m : tensor<f32>
  return %0 : tensor<f32>
}

// -----

zero.mesh @m(shape = [2])
func.func @all_to_all_buffer_types(%a: memref<4xf32>, %b: memref<4xi8>) {
  // expected-error @+1 {{'zero.all_to_all_buffer' op input and output differ in shape or element type: 'memref<4xf32>' and 'memref<4xi8>'}}
  zero.all_to_all_buffer %a, %b on @m : memref<4xf32>, memref<4xi8>
  return
}

// -----

func.func @host_alloc_strided() {
  // expected-error @+1 {{'zero.host_alloc' op must have the identity layout, not strided<[2]>}}
  %0 = zero.host_alloc : memref<4xf32, strided<[2]>>
  return
}
