// RUN: zero-opt %s --split-input-file --zero-host-parallel-loops --verify-diagnostics | FileCheck %s
// RUN: zero-opt %s --split-input-file --zero-host-parallel-loops=min-elements=0 | FileCheck %s --check-prefix=OFF

// An update of a 256x300 moment, every operand a dense buffer read at its
// element: one loop over its 76800 elements, on flat views of the buffers
// (each element computed as before), the body a task over a range of them
// (contiguous: it vectorizes), called through zero_rt_parallel_for; the
// buffers and the scalar pass through the context's slots.
// CHECK-LABEL: func.func @update
// CHECK-SAME: (%[[M:.*]]: memref<256x300xf32>, %[[G:.*]]: memref<256x300xf32>, %[[S:.*]]: f32)
// CHECK: %[[CONTEXT:.*]] = llvm.alloca %{{.*}} x i64
// CHECK-DAG: %[[FG:.*]] = memref.collapse_shape %[[G]] {{\[\[}}0, 1]] : memref<256x300xf32> into memref<76800xf32>
// CHECK-DAG: %[[FM:.*]] = memref.collapse_shape %[[M]] {{\[\[}}0, 1]] : memref<256x300xf32> into memref<76800xf32>
// CHECK: memref.extract_aligned_pointer_as_index %[[FG]]
// CHECK: memref.extract_aligned_pointer_as_index %[[FM]]
// CHECK: arith.bitcast %[[S]] : f32 to i32
// CHECK: %[[TASK:.*]] = constant @update_host0 : (!llvm.ptr, i64, i64) -> ()
// CHECK: %[[POINTER:.*]] = builtin.unrealized_conversion_cast %[[TASK]]
// CHECK: %[[N:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: call @zero_rt_parallel_for(%[[POINTER]], %[[CONTEXT]], %[[N]], %c1_i64)
// CHECK-NOT: linalg.generic
// CHECK: func.func private @update_host0(%[[C:.*]]: !llvm.ptr, %[[BEGIN:.*]]: i64, %[[END:.*]]: i64) attributes {zero.host_task}
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NOT: arith.divsi
// CHECK-NOT: arith.remsi
// CHECK-NOT: scf.for
// CHECK:   arith.mulf
// CHECK:   arith.addf
// CHECK:   memref.store
// OFF-LABEL: func.func @update
// OFF: linalg.generic
// OFF-NOT: zero_rt_parallel_for
#map = affine_map<(i, j) -> (i, j)>
func.func @update(%m: memref<256x300xf32>, %g: memref<256x300xf32>, %s: f32) {
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%g : memref<256x300xf32>) outs(%m : memref<256x300xf32>) {
  ^bb0(%a: f32, %b: f32):
    %p = arith.mulf %a, %s : f32
    %q = arith.addf %b, %p : f32
    linalg.yield %q : f32
  }
  return
}

// -----

// A 3x3 convolution's weight (64x128x3x3), dense: one flat loop too, where
// its innermost loop of 3 would have kept the nest scalar.
// CHECK-LABEL: func.func @convolution_weight
// CHECK: memref.collapse_shape %{{.*}} {{\[\[}}0, 1, 2, 3]] : memref<64x128x3x3xf32> into memref<73728xf32>
// CHECK: call @zero_rt_parallel_for(%{{.*}}, %{{.*}}, %{{.*}}, %c1_i64)
// CHECK: func.func private @convolution_weight_host0
// CHECK: scf.for
// CHECK-NOT: arith.remsi
// CHECK-NOT: scf.for
// CHECK: memref.store
#map = affine_map<(a, b, c, d) -> (a, b, c, d)>
func.func @convolution_weight(%w: memref<64x128x3x3xf32>) {
  linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%w : memref<64x128x3x3xf32>) {
  ^bb0(%b: f32):
    %q = arith.addf %b, %b : f32
    linalg.yield %q : f32
  }
  return
}

// -----

// A moment updated in its own buffer (read as an input and written as the
// output): one flat view of it, so that the task reads and writes through
// one pointer (two would make LLVM's vectorizer check them for overlap at
// run time, find it, and run the scalar loop).
// CHECK-LABEL: func.func @in_place
// CHECK-SAME: (%[[M:.*]]: memref<64x512xf32>, %[[G:.*]]: memref<64x512xf32>)
// CHECK: memref.collapse_shape %[[M]]
// CHECK-NOT: memref.collapse_shape %[[M]]
// CHECK: call @zero_rt_parallel_for
#map = affine_map<(i, j) -> (i, j)>
func.func @in_place(%m: memref<64x512xf32>, %g: memref<64x512xf32>) {
  linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%m, %g : memref<64x512xf32>, memref<64x512xf32>) outs(%m : memref<64x512xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %q = arith.addf %a, %b : f32
    linalg.yield %q : f32
  }
  return
}

// -----

// A bias added to each row of a 256x300 activation (read along the rows,
// not at each element, so not flat): a loop over its 256 rows, each task
// iteration running its row's 300 elements whole (a loop that stays
// contiguous, and vectorizes).
// CHECK-LABEL: func.func @rows
// CHECK: call @zero_rt_parallel_for(%{{.*}}, %{{.*}}, %{{.*}}, %c300_i64)
// CHECK: func.func private @rows_host0
// CHECK: scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NOT: arith.divsi
// CHECK:   scf.for %[[COLUMN:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NOT: arith.remsi
// CHECK:     arith.addf
// CHECK:     memref.store
#map = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
func.func @rows(%x: memref<256x300xf32>, %bias: memref<300xf32>) {
  linalg.generic {indexing_maps = [#row, #map], iterator_types = ["parallel", "parallel"]}
      ins(%bias : memref<300xf32>) outs(%x : memref<256x300xf32>) {
  ^bb0(%a: f32, %b: f32):
    %q = arith.addf %b, %a : f32
    linalg.yield %q : f32
  }
  return
}

// -----

// Two rows of 65536 with a bias: too few rows to share among the cores, so
// one loop over every element, its index split into row and column.
// CHECK-LABEL: func.func @two_rows
// CHECK: call @zero_rt_parallel_for(%{{.*}}, %{{.*}}, %{{.*}}, %c1_i64)
// CHECK: func.func private @two_rows_host0
// CHECK: scf.for
// CHECK:   arith.remsi %{{.*}}, %c65536
// CHECK:   arith.divsi %{{.*}}, %c65536
#map = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
func.func @two_rows(%m: memref<2x65536xf32>, %bias: memref<65536xf32>) {
  linalg.generic {indexing_maps = [#row, #map], iterator_types = ["parallel", "parallel"]}
      ins(%bias : memref<65536xf32>) outs(%m : memref<2x65536xf32>) {
  ^bb0(%a: f32, %b: f32):
    %q = arith.addf %b, %a : f32
    linalg.yield %q : f32
  }
  return
}

// -----

// A view of dynamic offset and stride (a shard by the rank's index, a
// buffer a loop carries) passes to a task with them: its address, offset
// and stride, three slots of the context, from which the task makes the
// view again.
// CHECK-LABEL: func.func @dynamic_layout
// CHECK: %[[BASE:.*]], %[[OFFSET:.*]], %{{.*}}, %[[STRIDE:.*]] = memref.extract_strided_metadata %{{.*}} : memref<65536xf32, strided<[?], offset: ?>>
// CHECK: arith.index_cast %[[OFFSET]] : index to i64
// CHECK: arith.index_cast %[[STRIDE]] : index to i64
// CHECK: call @zero_rt_parallel_for
// CHECK-LABEL: func.func private @dynamic_layout_host0
// CHECK: memref.reinterpret_cast %{{.*}} to offset: [%{{.*}}], sizes: [65536], strides: [%{{.*}}] : memref<1xf32> to memref<65536xf32, strided<[?], offset: ?>>
#map = affine_map<(i) -> (i)>
func.func @dynamic_layout(%a: memref<65536xf32, strided<[?], offset: ?>>) {
  linalg.generic {indexing_maps = [#map], iterator_types = ["parallel"]}
      outs(%a : memref<65536xf32, strided<[?], offset: ?>>) {
  ^bb0(%b: f32):
    %q = arith.addf %b, %b : f32
    linalg.yield %q : f32
  }
  return
}

// -----

// A value a task cannot take (a vector, which is no number of 64 bits):
// the op becomes a loop on the rank's thread, and says why.
// CHECK-LABEL: func.func @vector_value
// CHECK: scf.for
// CHECK-NOT: call @zero_rt_parallel_for
#map = affine_map<(i) -> (i)>
func.func @vector_value(%a: memref<65536xf32>, %v: vector<4xf32>) {
  // expected-remark @+1 {{zero-host-parallel-loops: stays on one thread: it uses a value of type 'vector<4xf32>', which a task cannot take (a number or a buffer of static shape)}}
  linalg.generic {indexing_maps = [#map], iterator_types = ["parallel"]}
      outs(%a : memref<65536xf32>) {
  ^bb0(%b: f32):
    %e = vector.extract %v[0] : f32 from vector<4xf32>
    %q = arith.addf %b, %e : f32
    linalg.yield %q : f32
  }
  return
}

// -----

// Independent updates (each moment in its own buffer) share one task: one
// zero_rt_parallel_for over the larger's 32768 elements, each range
// [begin, end) of which runs n * begin / 32768 to n * end / 32768 of each
// loop of n, one loop after the other, so that no thread waits between
// them; an iteration of the task is one element (the floor of 32816 /
// 32768). The small one (48 elements, below min-elements alone) runs with
// them; the view and the constant between the two stay where they are.
// CHECK-LABEL: func.func @independent
// CHECK: constant @independent_host0
// CHECK: %[[N:.*]] = arith.index_cast %c32768{{.*}} : index to i64
// CHECK: call @zero_rt_parallel_for(%{{.*}}, %{{.*}}, %[[N]], %c1_i64)
// CHECK-NOT: call @zero_rt_parallel_for
// CHECK-NOT: linalg.generic
// CHECK: func.func private @independent_host0(%{{.*}}: !llvm.ptr, %[[BEGIN:.*]]: i64, %[[END:.*]]: i64)
// CHECK-DAG: %[[B:.*]] = arith.index_cast %[[BEGIN]] : i64 to index
// CHECK-DAG: %[[E:.*]] = arith.index_cast %[[END]] : i64 to index
// The larger loop's part is [begin, end) itself.
// CHECK: scf.for %{{.*}} = %[[B]] to %[[E]]
// CHECK: arith.mulf
// CHECK: %[[N2:.*]] = arith.constant 48 : index
// CHECK: %[[ALL2:.*]] = arith.constant 32768 : index
// CHECK: %[[X2:.*]] = arith.muli %[[N2]], %[[B]] : index
// CHECK: %[[FROM2:.*]] = arith.divui %[[X2]], %[[ALL2]] : index
// CHECK: %[[Y2:.*]] = arith.muli %[[N2]], %[[E]] : index
// CHECK: %[[TO2:.*]] = arith.divui %[[Y2]], %[[ALL2]] : index
// CHECK: scf.for %{{.*}} = %[[FROM2]] to %[[TO2]]
// CHECK: arith.addf
#map = affine_map<(i, j) -> (i, j)>
#id = affine_map<(i) -> (i)>
func.func @independent(%m: memref<128x256xf32>, %g: memref<128x256xf32>, %v: memref<64xf32>, %h: memref<48xf32>, %s: f32) {
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%g : memref<128x256xf32>) outs(%m : memref<128x256xf32>) {
  ^bb0(%a: f32, %b: f32):
    %p = arith.mulf %a, %s : f32
    linalg.yield %p : f32
  }
  %part = memref.subview %v[16] [48] [1] : memref<64xf32> to memref<48xf32, strided<[1], offset: 16>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%h : memref<48xf32>) outs(%part : memref<48xf32, strided<[1], offset: 16>>) {
  ^bb0(%a: f32, %b: f32):
    %q = arith.addf %a, %b : f32
    linalg.yield %q : f32
  }
  return
}

// -----

// Negative: the second update reads what the first writes, so the two may
// not run at once: a task and a wait each, in order.
// CHECK-LABEL: func.func @dependent
// CHECK: call @zero_rt_parallel_for
// CHECK: call @zero_rt_parallel_for
// CHECK: return
#map = affine_map<(i, j) -> (i, j)>
func.func @dependent(%m: memref<128x256xf32>, %g: memref<128x256xf32>, %w: memref<128x256xf32>) {
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%g : memref<128x256xf32>) outs(%m : memref<128x256xf32>) {
  ^bb0(%a: f32, %b: f32):
    %p = arith.addf %a, %b : f32
    linalg.yield %p : f32
  }
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%m : memref<128x256xf32>) outs(%w : memref<128x256xf32>) {
  ^bb0(%a: f32, %b: f32):
    %p = arith.subf %b, %a : f32
    linalg.yield %p : f32
  }
  return
}

// -----

// Negative: an op that touches memory between two independent updates (a
// copy) keeps them apart: the first must be done before it, the second
// may not start before it.
// CHECK-LABEL: func.func @apart
// CHECK: call @zero_rt_parallel_for
// CHECK: memref.copy
// CHECK: call @zero_rt_parallel_for
#map = affine_map<(i, j) -> (i, j)>
func.func @apart(%m: memref<128x256xf32>, %g: memref<128x256xf32>, %v: memref<128x256xf32>, %x: memref<4xf32>, %y: memref<4xf32>) {
  linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel"]}
      outs(%m : memref<128x256xf32>) {
  ^bb0(%b: f32):
    %p = arith.addf %b, %b : f32
    linalg.yield %p : f32
  }
  memref.copy %x, %y : memref<4xf32> to memref<4xf32>
  linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel"]}
      outs(%v : memref<128x256xf32>) {
  ^bb0(%b: f32):
    %p = arith.mulf %b, %b : f32
    linalg.yield %p : f32
  }
  return
}
