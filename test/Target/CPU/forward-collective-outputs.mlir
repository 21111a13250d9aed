// zero-forward-collective-outputs: a collective whose fresh output is only
// copied, whole, into another buffer writes into that buffer itself, where
// nothing touches that buffer between the two; elsewhere nothing changes,
// and where only a hazard stands in the way a remark at the copy says so.

// RUN: zero-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(zero-forward-collective-outputs))' --verify-diagnostics | FileCheck %s

// A weight gathered on its own and copied into its argument (as
// zero-donate-state and One-Shot Bufferize leave it): the gather writes
// into the argument, seen in the gather's shape, made before the gather.
zero.mesh @dp(shape = [2])
// CHECK-LABEL: func.func @gathered_into_argument
// CHECK-SAME: (%[[W:.*]]: memref<4x3xf32>, %[[SHARD:.*]]: memref<6xf32>)
// CHECK-NOT: memref.alloc
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %[[W]] {{\[\[}}0, 1]] : memref<4x3xf32> into memref<12xf32>
// CHECK-NEXT: zero.all_gather_buffer %[[SHARD]], %[[FLAT]] on @dp
// CHECK-NOT: memref.copy
// CHECK: return
func.func @gathered_into_argument(%w: memref<4x3xf32>, %shard: memref<6xf32>) -> memref<4x3xf32> {
  %out = memref.alloc() : memref<12xf32>
  zero.all_gather_buffer %shard, %out on @dp : memref<6xf32>, memref<12xf32>
  %flat = memref.collapse_shape %w [[0, 1]] : memref<4x3xf32> into memref<12xf32>
  memref.copy %out, %flat : memref<12xf32> to memref<12xf32>
  %new = memref.expand_shape %flat [[0, 1]] output_shape [4, 3] : memref<12xf32> into memref<4x3xf32>
  return %new : memref<4x3xf32>
}

// -----

// The copy reads the output through a reshape: the target is reshaped
// back. A started collective's wait names the new output too.
zero.mesh @dp(shape = [2])
// CHECK-LABEL: func.func @started_and_reshaped
// CHECK-SAME: (%[[W:.*]]: memref<4x3xf32>, %[[SHARD:.*]]: memref<6xf32>, %[[X:.*]]: memref<8xf32>)
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %[[W]]
// CHECK-NEXT: %[[R:.*]] = zero.all_gather_buffer %[[SHARD]], %[[FLAT]] on @dp : memref<6xf32>, memref<12xf32> -> !zero.request
// CHECK: linalg.fill
// CHECK: zero.wait %[[R]], %[[SHARD]], %[[FLAT]]
// CHECK-NOT: memref.copy
func.func @started_and_reshaped(%w: memref<4x3xf32>, %shard: memref<6xf32>, %x: memref<8xf32>) {
  %out = memref.alloc() : memref<12xf32>
  %r = zero.all_gather_buffer %shard, %out on @dp : memref<6xf32>, memref<12xf32> -> !zero.request
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%x : memref<8xf32>)
  zero.wait %r, %shard, %out : memref<6xf32>, memref<12xf32>
  %rows = memref.expand_shape %out [[0, 1]] output_shape [4, 3] : memref<12xf32> into memref<4x3xf32>
  memref.copy %rows, %w : memref<4x3xf32> to memref<4x3xf32>
  return
}

// -----

// The argument's old value is read between the gather and the copy: the
// gather would overwrite it first, so the copy stays, with the reason.
zero.mesh @dp(shape = [2])
// CHECK-LABEL: func.func @read_between
// CHECK: %[[OUT:.*]] = memref.alloc
// CHECK: zero.all_gather_buffer %{{.*}}, %[[OUT]]
// CHECK: memref.copy %[[OUT]]
func.func @read_between(%w: memref<12xf32>, %shard: memref<6xf32>, %y: memref<12xf32>) {
  %out = memref.alloc() : memref<12xf32>
  zero.all_gather_buffer %shard, %out on @dp : memref<6xf32>, memref<12xf32>
  memref.copy %w, %y : memref<12xf32> to memref<12xf32>
  // expected-remark @+1 {{zero-forward-collective-outputs: the copy of 'zero.all_gather_buffer''s output stays: the buffer it is copied into is used between the two}}
  memref.copy %out, %w : memref<12xf32> to memref<12xf32>
  return
}

// -----

// A collective started before the gather still reads the argument until
// its wait, after the copy.
zero.mesh @dp(shape = [2])
// CHECK-LABEL: func.func @still_read_by_a_started_collective
// CHECK: %[[OUT:.*]] = memref.alloc
// CHECK: zero.all_gather_buffer %{{.*}}, %[[OUT]]
// CHECK: memref.copy %[[OUT]]
func.func @still_read_by_a_started_collective(%w: memref<12xf32>, %shard: memref<6xf32>) {
  %sum = memref.alloc() : memref<6xf32>
  %r = zero.reduce_scatter_buffer %w, %sum on @dp reduce = sum : memref<12xf32>, memref<6xf32> -> !zero.request
  %out = memref.alloc() : memref<12xf32>
  zero.all_gather_buffer %shard, %out on @dp : memref<6xf32>, memref<12xf32>
  // expected-remark @+1 {{zero-forward-collective-outputs: the copy of 'zero.all_gather_buffer''s output stays: a collective's wait after it names the buffer it is copied into}}
  memref.copy %out, %w : memref<12xf32> to memref<12xf32>
  zero.wait %r, %w, %sum : memref<12xf32>, memref<6xf32>
  return
}

// -----

// The gather reads a view of the buffer its output is copied into (an
// in-place gather, which the copy does not make).
zero.mesh @dp(shape = [2])
// CHECK-LABEL: func.func @reads_its_target
// CHECK: memref.copy
func.func @reads_its_target(%w: memref<12xf32>) {
  %part = memref.subview %w[0] [6] [1] : memref<12xf32> to memref<6xf32, strided<[1]>>
  %out = memref.alloc() : memref<12xf32>
  zero.all_gather_buffer %part, %out on @dp : memref<6xf32, strided<[1]>>, memref<12xf32>
  // expected-remark @+1 {{the collective reads the buffer it is copied into}}
  memref.copy %out, %w : memref<12xf32> to memref<12xf32>
  return
}

// -----

// The output is read by something other than the copy, or only part of it
// is copied: the collective keeps its buffer, with no remark (nothing
// else could be done).
zero.mesh @dp(shape = [2])
// CHECK-LABEL: func.func @other_readers
// CHECK-COUNT-2: memref.copy
func.func @other_readers(%w: memref<12xf32>, %v: memref<6xf32>, %shard: memref<6xf32>, %y: memref<12xf32>) {
  %out = memref.alloc() : memref<12xf32>
  zero.all_gather_buffer %shard, %out on @dp : memref<6xf32>, memref<12xf32>
  memref.copy %out, %w : memref<12xf32> to memref<12xf32>
  memref.copy %out, %y : memref<12xf32> to memref<12xf32>
  %out2 = memref.alloc() : memref<12xf32>
  zero.all_gather_buffer %shard, %out2 on @dp : memref<6xf32>, memref<12xf32>
  %half = memref.subview %out2[0] [6] [1] : memref<12xf32> to memref<6xf32, strided<[1]>>
  memref.copy %half, %v : memref<6xf32, strided<[1]>> to memref<6xf32>
  return
}

// -----

// The copy is in another block (a branch): it may not run, so the
// argument must keep its old value until it does.
zero.mesh @dp(shape = [2])
// CHECK-LABEL: func.func @copied_in_a_branch
// CHECK: memref.alloc
// CHECK: scf.if
// CHECK: memref.copy
func.func @copied_in_a_branch(%w: memref<12xf32>, %shard: memref<6xf32>, %c: i1) {
  %out = memref.alloc() : memref<12xf32>
  zero.all_gather_buffer %shard, %out on @dp : memref<6xf32>, memref<12xf32>
  scf.if %c {
    // expected-remark @+1 {{it is not after the collective in the same block}}
    memref.copy %out, %w : memref<12xf32> to memref<12xf32>
  }
  return
}

// -----

// In place: the new shard is made elementwise from this rank's part of the
// weight the gather writes into (the update reads its old shard there), so
// the update writes over that part and the gather sends it from there.
// No buffer for the new shard, and no rank copies its own part.
zero.mesh @dp(shape = [2])
#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @gathered_in_place
// CHECK-SAME: (%[[W:.*]]: memref<12xf32>, %[[G:.*]]: memref<6xf32>)
// CHECK-NOT: memref.alloc
// CHECK: %[[PART:.*]] = memref.subview %[[W]][%{{.*}}] [6] [1]
// CHECK: linalg.generic {{.*}} ins(%[[PART]], %[[G]] : {{.*}}) outs(%[[PART]] : memref<6xf32, strided<[1], offset: ?>>)
// CHECK: zero.all_gather_buffer %[[PART]], %[[W]] on @dp : memref<6xf32, strided<[1], offset: ?>>, memref<12xf32>
func.func @gathered_in_place(%w: memref<12xf32>, %g: memref<6xf32>) {
  %r = zero.replica_index on @dp : index
  %c6 = arith.constant 6 : index
  %o = arith.muli %r, %c6 : index
  %part = memref.subview %w[%o] [6] [1] : memref<12xf32> to memref<6xf32, strided<[1], offset: ?>>
  %new = memref.alloc() : memref<6xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%part, %g : memref<6xf32, strided<[1], offset: ?>>, memref<6xf32>) outs(%new : memref<6xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  }
  zero.all_gather_buffer %new, %w on @dp : memref<6xf32>, memref<12xf32>
  return
}

// -----

// In place and in flight (zero-schedule-overlap's gather, awaited later):
// the same, the gather's wait naming the part as its input. Nothing
// touches the weight between the start and the wait.
zero.mesh @dp(shape = [2])
#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @started_in_place
// CHECK-SAME: (%[[W:.*]]: memref<12xf32>, %[[G:.*]]: memref<6xf32>, %[[X:.*]]: memref<8xf32>)
// CHECK-NOT: memref.alloc
// CHECK: %[[PART:.*]] = memref.subview %[[W]][%{{.*}}] [6] [1]
// CHECK: linalg.generic {{.*}} outs(%[[PART]] : memref<6xf32, strided<[1], offset: ?>>)
// CHECK: %[[R:.*]] = zero.all_gather_buffer %[[PART]], %[[W]] on @dp : memref<6xf32, strided<[1], offset: ?>>, memref<12xf32> -> !zero.request
// CHECK: linalg.fill
// CHECK: zero.wait %[[R]], %[[PART]], %[[W]]
func.func @started_in_place(%w: memref<12xf32>, %g: memref<6xf32>, %x: memref<8xf32>) {
  %r = zero.replica_index on @dp : index
  %c6 = arith.constant 6 : index
  %o = arith.muli %r, %c6 : index
  %part = memref.subview %w[%o] [6] [1] : memref<12xf32> to memref<6xf32, strided<[1], offset: ?>>
  %new = memref.alloc() : memref<6xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%part, %g : memref<6xf32, strided<[1], offset: ?>>, memref<6xf32>) outs(%new : memref<6xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  }
  %req = zero.all_gather_buffer %new, %w on @dp : memref<6xf32>, memref<12xf32> -> !zero.request
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%x : memref<8xf32>)
  zero.wait %req, %new, %w : memref<6xf32>, memref<12xf32>
  return
}

// -----

// Negative: the weight is read while its gather is in flight (the gather
// writes the other ranks' parts meanwhile): the shard keeps its buffer,
// with the reason.
zero.mesh @dp(shape = [2])
#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @read_in_flight
// CHECK: %[[NEW:.*]] = memref.alloc() : memref<6xf32>
// CHECK: zero.all_gather_buffer %[[NEW]], %{{.*}} on @dp : memref<6xf32>, memref<12xf32> -> !zero.request
func.func @read_in_flight(%w: memref<12xf32>, %g: memref<6xf32>, %y: memref<12xf32>) {
  %r = zero.replica_index on @dp : index
  %c6 = arith.constant 6 : index
  %o = arith.muli %r, %c6 : index
  %part = memref.subview %w[%o] [6] [1] : memref<12xf32> to memref<6xf32, strided<[1], offset: ?>>
  %new = memref.alloc() : memref<6xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%part, %g : memref<6xf32, strided<[1], offset: ?>>, memref<6xf32>) outs(%new : memref<6xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  }
  // expected-remark @below {{gathers from a buffer of its own, not in place: the buffer it gathers into is used while it is in flight}}
  %req = zero.all_gather_buffer %new, %w on @dp : memref<6xf32>, memref<12xf32> -> !zero.request
  memref.copy %w, %y : memref<12xf32> to memref<12xf32>
  zero.wait %req, %new, %w : memref<6xf32>, memref<12xf32>
  return
}

// -----

// A 2-D weight: the update reads its part through bufferization's reshape,
// the gather writes through one of its own; the two are one view. On a
// 2x2 mesh's second axis, the part is the group index's.
zero.mesh @m(shape = [2, 2])
#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @two_views_of_one_weight
// CHECK: %[[PART:.*]] = memref.subview
// CHECK-NOT: memref.alloc
// CHECK: zero.all_gather_buffer %[[PART]], %{{.*}} on @m axes = [1] : memref<6xf32, strided<[1], offset: ?>>, memref<12xf32>
func.func @two_views_of_one_weight(%w: memref<4x3xf32>, %g: memref<6xf32>) {
  %r = zero.replica_index on @m axes = [1] : index
  %c6 = arith.constant 6 : index
  %o = arith.muli %c6, %r : index
  %flat = memref.collapse_shape %w [[0, 1]] : memref<4x3xf32> into memref<12xf32>
  %part = memref.subview %flat[%o] [6] [1] : memref<12xf32> to memref<6xf32, strided<[1], offset: ?>>
  %new = memref.alloc() : memref<6xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%part, %g : memref<6xf32, strided<[1], offset: ?>>, memref<6xf32>) outs(%new : memref<6xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  }
  %flat2 = memref.collapse_shape %w [[0, 1]] : memref<4x3xf32> into memref<12xf32>
  zero.all_gather_buffer %new, %flat2 on @m axes = [1] : memref<6xf32>, memref<12xf32>
  return
}

// -----

// Negative: the part's offset is another group's index (the whole mesh's
// where the gather runs on axis 1), or not this rank's part at all: the
// shard keeps its buffer, without a remark (the update does not read the
// gather's own part).
zero.mesh @m(shape = [2, 2])
#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @another_part
// CHECK-COUNT-2: zero.all_gather_buffer %{{.*}}, %{{.*}} on @m axes = [1] : memref<6xf32>, memref<12xf32>
func.func @another_part(%w: memref<12xf32>, %v: memref<12xf32>, %g: memref<6xf32>) {
  %r = zero.replica_index on @m : index
  %c6 = arith.constant 6 : index
  %o = arith.muli %r, %c6 : index
  %part = memref.subview %w[%o] [6] [1] : memref<12xf32> to memref<6xf32, strided<[1], offset: ?>>
  %new = memref.alloc() : memref<6xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%part, %g : memref<6xf32, strided<[1], offset: ?>>, memref<6xf32>) outs(%new : memref<6xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  }
  zero.all_gather_buffer %new, %w on @m axes = [1] : memref<6xf32>, memref<12xf32>
  %r1 = zero.replica_index on @m axes = [1] : index
  %c3 = arith.constant 3 : index
  %o1 = arith.muli %r1, %c3 : index
  %half = memref.subview %v[%o1] [6] [1] : memref<12xf32> to memref<6xf32, strided<[1], offset: ?>>
  %new1 = memref.alloc() : memref<6xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%half, %g : memref<6xf32, strided<[1], offset: ?>>, memref<6xf32>) outs(%new1 : memref<6xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  }
  zero.all_gather_buffer %new1, %v on @m axes = [1] : memref<6xf32>, memref<12xf32>
  return
}

// -----

// Negative: the weight is read between the update and the gather (it
// would read the new part, not the old), and another op reads the shard
// the update wrote: the shard keeps its buffer; the first with a remark.
zero.mesh @dp(shape = [2])
#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @read_after_the_update
// CHECK: zero.all_gather_buffer %{{.*}}, %{{.*}} on @dp : memref<6xf32>, memref<12xf32>
// CHECK: zero.all_gather_buffer %{{.*}}, %{{.*}} on @dp : memref<6xf32>, memref<12xf32>
func.func @read_after_the_update(%w: memref<12xf32>, %g: memref<6xf32>, %y: memref<12xf32>, %z: memref<6xf32>) {
  %r = zero.replica_index on @dp : index
  %c6 = arith.constant 6 : index
  %o = arith.muli %r, %c6 : index
  %part = memref.subview %w[%o] [6] [1] : memref<12xf32> to memref<6xf32, strided<[1], offset: ?>>
  %new = memref.alloc() : memref<6xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%part, %g : memref<6xf32, strided<[1], offset: ?>>, memref<6xf32>) outs(%new : memref<6xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  }
  memref.copy %w, %y : memref<12xf32> to memref<12xf32>
  // expected-remark @below {{gathers from a buffer of its own, not in place: the buffer it gathers into is used between the op that makes its input and the gather}}
  zero.all_gather_buffer %new, %w on @dp : memref<6xf32>, memref<12xf32>
  %new2 = memref.alloc() : memref<6xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%part, %g : memref<6xf32, strided<[1], offset: ?>>, memref<6xf32>) outs(%new2 : memref<6xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %d = arith.addf %a, %b : f32
    linalg.yield %d : f32
  }
  memref.copy %new2, %z : memref<6xf32> to memref<6xf32>
  zero.all_gather_buffer %new2, %w on @dp : memref<6xf32>, memref<12xf32>
  return
}

// -----

// An offloaded function (state in host memory) gathers in place too: its
// update becomes a host loop on the rank's queue, which zero-offload-to-host
// keeps after the device's reads of the old weight
// (offload-host-queue.mlir, @in_place).
zero.mesh @dp(shape = [2])
#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @offloaded
// CHECK-NOT: memref.alloc
// CHECK: %[[PART:.*]] = memref.subview
// CHECK: linalg.generic {{.*}} outs(%[[PART]] : memref<6xf32, strided<[1], offset: ?>>)
// CHECK: zero.all_gather_buffer %[[PART]], %{{.*}} on @dp : memref<6xf32, strided<[1], offset: ?>>, memref<12xf32>
func.func @offloaded(%w: memref<12xf32>, %m: memref<6xf32> {zero.memory = "host"}) {
  %r = zero.replica_index on @dp : index
  %c6 = arith.constant 6 : index
  %o = arith.muli %r, %c6 : index
  %part = memref.subview %w[%o] [6] [1] : memref<12xf32> to memref<6xf32, strided<[1], offset: ?>>
  %new = memref.alloc() : memref<6xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%part, %m : memref<6xf32, strided<[1], offset: ?>>, memref<6xf32>) outs(%new : memref<6xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  }
  zero.all_gather_buffer %new, %w on @dp : memref<6xf32>, memref<12xf32>
  return
}
