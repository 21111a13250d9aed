// zero-offload-to-host{overlap} (the default): the host's part of an
// offloaded update (its loops, and its copies across the link) goes to the
// rank's host queue, which runs it beside the rank's stream. Each queued op
// moves up to just after what it depends on, each run of them starts with
// a fence (the queue waits for the stream's work before it), and the rank
// waits for the queue (zero_rt_host_queue_join) once, before the first op
// that must see the queue's work; the ops that depend on that work, and the
// frees of the buffers the queue uses, move after the wait, but for those
// of the device buffers that the queue's updates only copy down (the
// gradient shards): each is marked for the queue just after the last op
// that touches it, and goes back to the rank's pool once it is copied
// down, so that the step does not hold them all until the wait; and for
// those of the host staging buffers that only the queue uses, which the
// queue frees once its update is done (`zero.host_alloc staging`,
// `zero.staging`), so that the rank holds them within its staging budget
// rather than one for every update of the step. An update
// goes to the queue as one call with its copies (zero_rt_host_queue_update:
// to, from and bytes an iteration for each whose staging buffer splits by
// its iterations, iteration i having elements [i * k, (i + 1) * k); the
// bytes negated for one copied whole, before the first chunk or after the
// last),
// which the queue pipelines in chunks; any other, op by op. The
// chunks are the cost model's: n chunks take the first chunk's copies in,
// loop and copies out, then the slowest of the three for each other, and
// chunk-overhead-us each; the call gets their bytes of copies (0: one).
// RUN: zero-opt %s --split-input-file --zero-offload-to-host --verify-diagnostics | FileCheck %s
// With copies that dominate and chunks that cost nothing, each of the 4
// iterations is a chunk: 12 of the 48 bytes of copies.
// RUN: zero-opt %s --split-input-file --zero-offload-to-host='link-gbps=0.000001 chunk-overhead-us=0' 2>&1 | FileCheck %s --check-prefix=CHUNKS
// CHUNKS: remark: zero-offload-to-host: @overlaps: 1 loop nest(s) on the host, 2 device buffer(s) copied; 1 op(s) on the rank's host queue beside its stream (1 update(s) with their copies, in 4 chunk(s) by the cost model)
// CHUNKS-LABEL: func.func @overlaps
// CHUNKS: %[[NIN:.*]] = arith.constant 2 : i64
// CHUNKS: %[[NOUT:.*]] = arith.constant 1 : i64
// CHUNKS: %[[CHUNK:.*]] = arith.constant 12 : i64
// CHUNKS: call @zero_rt_host_queue_update(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[NIN]], %[[NOUT]], %[[CHUNK]], %{{.*}}, %{{.*}})
// A bad figure is an error.
// With queue-frees=false the rank frees every buffer the queue uses after
// its wait.
// RUN: zero-opt %s --split-input-file --zero-offload-to-host='queue-frees=false' 2>&1 | FileCheck %s --check-prefix=RANKFREES
// RANKFREES: remark: zero-offload-to-host: @overlaps: {{.*}} 0 buffer(s) freed once copied down, 0 host staging buffer(s) freed by the queue, 0 after a wait, 1 wait(s), 4 op(s) moved after one
// RANKFREES-LABEL: func.func @overlaps
// RANKFREES-NOT: zero.queued
// RANKFREES-NOT: staging
// RANKFREES: call @zero_rt_host_queue_join() : () -> ()
// RANKFREES-NEXT: memref.dealloc %{{.*}} : memref<4xf32>
// RANKFREES-NEXT: memref.dealloc %{{.*}} : memref<4xf32>
// RANKFREES-NEXT: scf.parallel
// RANKFREES: memref.dealloc %{{.*}} : memref<8xf32>
// RANKFREES-NEXT: return
// RUN: not zero-opt %s --split-input-file --zero-offload-to-host='host-gbps=0' 2>&1 | FileCheck %s --check-prefix=RATE
// RATE: error: zero-offload-to-host: host-gbps and link-gbps must be positive
// RUN: not zero-opt %s --split-input-file --zero-offload-to-host='chunk-overhead-us=-1' 2>&1 | FileCheck %s --check-prefix=OVERHEAD
// OVERHEAD: error: zero-offload-to-host: chunk-overhead-us must not be negative

// The reduce-scatter makes the gradient shard; the backward pass goes on
// over other buffers (the nest on %act); then the update on the host
// moment, whose new weight shard a device nest reads. The update moves up
// to right after the reduce-scatter, the backward's nest stays where it
// was, beside the queue, and the weight's reader follows the wait. The
// gradient's bucket, which only the update's copies in read, is freed just
// after the update is queued, before the backward's nest (a GPU starts
// those copies when the rank queues the update); so are the host staging
// buffers, which only the queued update uses: the queue frees them once
// it is done.
// CHECK-LABEL: func.func @overlaps
// CHECK-SAME: (%[[M:.*]]: memref<4xf32> {zero.memory = "host"}, %[[FULL:.*]]: memref<16xf32>, %[[W:.*]]: memref<4xf32>, %[[ACT:.*]]: memref<64xf32>, %[[OUT:.*]]: memref<4xf32>)
// CHECK: %[[TABLE:.*]] = llvm.alloca %{{.*}} x i64
// CHECK: %[[BUCKET:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
// CHECK: zero.reduce_scatter_buffer %[[FULL]], %[[BUCKET]]
// CHECK: %[[GH:.*]] = zero.host_alloc staging : memref<4xf32>
// CHECK: %[[WH:.*]] = zero.host_alloc staging : memref<4xf32>
// CHECK: call @zero_rt_host_queue_fence() : () -> ()
// The copies: the gradient's and the weight's in, the weight's out, 4
// bytes an iteration each.
// CHECK: memref.extract_aligned_pointer_as_index %[[GH]]
// CHECK: %[[SLOT0:.*]] = llvm.getelementptr %[[TABLE]][0]
// CHECK: memref.extract_aligned_pointer_as_index %{{.*}} : memref<4xf32, strided<[1], offset: 4>>
// CHECK: %[[FOUR:.*]] = llvm.mlir.constant(4 : i64) : i64
// CHECK: %[[SLOT2:.*]] = llvm.getelementptr %[[TABLE]][2]
// CHECK: llvm.store %[[FOUR]], %[[SLOT2]] : i64, !llvm.ptr
// CHECK: %[[NIN:.*]] = arith.constant 2 : i64
// CHECK: %[[NOUT:.*]] = arith.constant 1 : i64
// One chunk: the whole update.
// CHECK: %[[ONE:.*]] = arith.constant 0 : i64
// No staging buffer for the queue to take: both are copied in.
// CHECK: %[[NSTAGED:.*]] = arith.constant 0 : i64
// CHECK: call @zero_rt_host_queue_update(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[TABLE]], %[[NIN]], %[[NOUT]], %[[ONE]], %{{.*}}, %[[NSTAGED]]) : (!llvm.ptr, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, i64, !llvm.ptr, i64) -> ()
// CHECK-NEXT: memref.dealloc %[[BUCKET]] {zero.queued}
// CHECK-NEXT: memref.dealloc %[[GH]] {zero.queued, zero.staging}
// CHECK-NEXT: memref.dealloc %[[WH]] {zero.queued, zero.staging}
// CHECK-NOT: memref.copy
// CHECK: scf.parallel
// CHECK: memref.store %{{.*}}, %[[ACT]]
// CHECK: call @zero_rt_host_queue_join() : () -> ()
// CHECK-NEXT: scf.parallel
// CHECK: memref.load %[[W]]
// CHECK: memref.store %{{.*}}, %[[OUT]]
// CHECK-NOT: memref.dealloc
// CHECK: return
// expected-remark @below {{zero-offload-to-host: @overlaps: 1 loop nest(s) on the host, 2 device buffer(s) copied; 1 op(s) on the rank's host queue beside its stream (1 update(s) with their copies, in 1 chunk(s) by the cost model), 1 buffer(s) freed once copied down, 2 host staging buffer(s) freed by the queue, 0 after a wait, 1 wait(s), 1 op(s) moved after one}}
func.func @overlaps(%m: memref<4xf32> {zero.memory = "host"}, %full: memref<16xf32>,
                    %w: memref<4xf32>,
                    %act: memref<64xf32>, %out: memref<4xf32>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %b = arith.constant 0.9 : f32
  %bucket = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
  zero.reduce_scatter_buffer %full, %bucket on @dp reduce = sum : memref<16xf32>, memref<8xf32>
  %g = memref.subview %bucket[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  // The rest of the backward pass.
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %a = memref.load %act[%i] : memref<64xf32>
    %a2 = arith.mulf %a, %b : f32
    memref.store %a2, %act[%i] : memref<64xf32>
    scf.reduce
  }
  // The update.
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %mi = memref.load %m[%i] : memref<4xf32>
    %gi = memref.load %g[%i] : memref<4xf32, strided<[1], offset: 4>>
    %wi = memref.load %w[%i] : memref<4xf32>
    %mb = arith.mulf %mi, %b : f32
    %m2 = arith.addf %mb, %gi : f32
    %w2 = arith.subf %wi, %m2 : f32
    memref.store %m2, %m[%i] : memref<4xf32>
    memref.store %w2, %w[%i] : memref<4xf32>
    scf.reduce
  }
  // A reader of the new weight: after the wait.
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %wi = memref.load %w[%i] : memref<4xf32>
    memref.store %wi, %out[%i] : memref<4xf32>
    scf.reduce
  }
  memref.dealloc %bucket : memref<8xf32>
  return %m : memref<4xf32>
}
zero.mesh @dp(shape = [2])

// -----

// An update that writes the new weight shard over the weight's own part,
// which the gather then sends in place (zero-forward-collective-outputs
// gathers so): its queued copy up must not overtake the device's reads of
// the old weight. The update moves up past the nest on other buffers, but
// not past the backward's read of the weight after the reduce-scatter
// (dX = dY W^T), and the fence before it has the queue wait for that read;
// the gather follows the wait.
// CHECK-LABEL: func.func @in_place
// CHECK-SAME: (%[[M:.*]]: memref<4xf32> {zero.memory = "host"}, %[[FULL:.*]]: memref<8xf32>, %[[W:.*]]: memref<8xf32>, %[[ACT:.*]]: memref<64xf32>, %[[DX:.*]]: memref<8xf32>)
// CHECK: zero.reduce_scatter_buffer %[[FULL]]
// CHECK: scf.parallel
// CHECK: memref.load %[[W]]
// CHECK: memref.store %{{.*}}, %[[DX]]
// CHECK: %[[PART:.*]] = memref.subview %[[W]]
// CHECK: call @zero_rt_host_queue_fence() : () -> ()
// CHECK: memref.extract_aligned_pointer_as_index %[[PART]]
// CHECK: call @zero_rt_host_queue_update
// CHECK: scf.parallel
// CHECK: memref.store %{{.*}}, %[[ACT]]
// CHECK: call @zero_rt_host_queue_join() : () -> ()
// CHECK-NEXT: zero.all_gather_buffer %[[PART]], %[[W]] on @dp
// CHECK: return
// expected-remark @below {{zero-offload-to-host: @in_place: 1 loop nest(s) on the host, 2 device buffer(s) copied; 1 op(s) on the rank's host queue beside its stream (1 update(s) with their copies, in 1 chunk(s) by the cost model), 1 buffer(s) freed once copied down, 2 host staging buffer(s) freed by the queue, 0 after a wait, 1 wait(s), 1 op(s) moved after one}}
func.func @in_place(%m: memref<4xf32> {zero.memory = "host"}, %full: memref<8xf32>,
                    %w: memref<8xf32>, %act: memref<64xf32>, %dx: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %b = arith.constant 0.9 : f32
  %r = zero.replica_index on @dp : index
  %o = arith.muli %r, %c4 : index
  %g = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
  zero.reduce_scatter_buffer %full, %g on @dp reduce = sum : memref<8xf32>, memref<4xf32>
  // The backward's read of the old weight.
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %wi = memref.load %w[%i] : memref<8xf32>
    %d = arith.mulf %wi, %b : f32
    memref.store %d, %dx[%i] : memref<8xf32>
    scf.reduce
  }
  // The rest of the backward pass.
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %a = memref.load %act[%i] : memref<64xf32>
    %a2 = arith.mulf %a, %b : f32
    memref.store %a2, %act[%i] : memref<64xf32>
    scf.reduce
  }
  %part = memref.subview %w[%o] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: ?>>
  // The update, in place.
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %mi = memref.load %m[%i] : memref<4xf32>
    %gi = memref.load %g[%i] : memref<4xf32>
    %wi = memref.load %part[%i] : memref<4xf32, strided<[1], offset: ?>>
    %mb = arith.mulf %mi, %b : f32
    %m2 = arith.addf %mb, %gi : f32
    %w2 = arith.subf %wi, %m2 : f32
    memref.store %m2, %m[%i] : memref<4xf32>
    memref.store %w2, %part[%i] : memref<4xf32, strided<[1], offset: ?>>
    scf.reduce
  }
  zero.all_gather_buffer %part, %w on @dp : memref<4xf32, strided<[1], offset: ?>>, memref<8xf32>
  memref.dealloc %g : memref<4xf32>
  return
}
zero.mesh @dp(shape = [2])

// -----

// What the update reads may not be overwritten before the queue has read
// it: the nest that writes the gradient's bucket again follows the wait,
// and so does everything after an op whose effects are unknown (a call of
// a function of the program's own), before which the rank waits.
// CHECK-LABEL: func.func @waits
// CHECK-SAME: (%[[M:.*]]: memref<4xf32> {zero.memory = "host"}, %[[BUCKET:.*]]: memref<8xf32>)
// CHECK: call @zero_rt_host_queue_fence() : () -> ()
// CHECK: call @zero_rt_host_queue_update
// CHECK-NEXT: memref.dealloc %{{.*}} {zero.queued, zero.staging}
// CHECK: call @zero_rt_host_queue_join() : () -> ()
// CHECK-NEXT: scf.parallel
// CHECK: memref.store %{{.*}}, %[[BUCKET]]
// CHECK: call @opaque() : () -> ()
// CHECK: return
// expected-remark @below {{zero-offload-to-host: @waits: 1 loop nest(s) on the host, 1 device buffer(s) copied; 1 op(s) on the rank's host queue beside its stream (1 update(s) with their copies, in 1 chunk(s) by the cost model), 0 buffer(s) freed once copied down, 1 host staging buffer(s) freed by the queue, 0 after a wait, 1 wait(s), 1 op(s) moved after one}}
func.func @waits(%m: memref<4xf32> {zero.memory = "host"}, %bucket: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %g = memref.subview %bucket[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %mi = memref.load %m[%i] : memref<4xf32>
    %gi = memref.load %g[%i] : memref<4xf32, strided<[1], offset: 4>>
    %m2 = arith.addf %mi, %gi : f32
    memref.store %m2, %m[%i] : memref<4xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %zero, %bucket[%i] : memref<8xf32>
    scf.reduce
  }
  func.call @opaque() : () -> ()
  return
}
func.func private @opaque()

// -----

// A device temporary that the host's update writes and only a kernel reads
// after it (LAMB's update direction, which the weight's kernel reads): it
// goes up (through the gradient's host buffer) on the rank's stream after
// the wait, not with the update on the queue, into a buffer allocated
// there, and the buffer the kernel writes for the gather is allocated
// where the kernel runs: the device holds neither while the queue works.
// CHECK-LABEL: func.func @late_upload
// CHECK-SAME: (%[[M:.*]]: memref<4xf32> {zero.memory = "host"}, %[[G:.*]]: memref<4xf32>, %[[W:.*]]: memref<4xf32>, %[[FULL:.*]]: memref<8xf32>)
// CHECK-NOT: memref.alloc()
// CHECK: %[[DH:.*]] = zero.host_alloc : memref<4xf32>
// CHECK-NOT: memref.alloc()
// CHECK: call @zero_rt_host_queue_update
// CHECK-NOT: memref.alloc()
// CHECK: call @zero_rt_host_queue_join() : () -> ()
// CHECK: %[[D:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.copy %[[DH]], %[[D]]
// CHECK: %[[NEW:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: scf.parallel
// CHECK: memref.load %[[D]]
// CHECK: memref.store %{{.*}}, %[[NEW]]
// CHECK: zero.all_gather_buffer %[[NEW]], %[[FULL]]
// expected-remark @below {{zero-offload-to-host: @late_upload: 1 loop nest(s) on the host, 2 device buffer(s) copied (1 back through the host buffer of one read); 1 op(s) on the rank's host queue beside its stream (1 update(s) with their copies, in 1 chunk(s) by the cost model), 0 buffer(s) freed once copied down, 0 host staging buffer(s) freed by the queue, 0 after a wait, 1 wait(s), 6 op(s) moved after one}}
func.func @late_upload(%m: memref<4xf32> {zero.memory = "host"},
                       %g: memref<4xf32>, %w: memref<4xf32>,
                       %full: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %d = memref.alloc() : memref<4xf32>
  %new = memref.alloc() : memref<4xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %mi = memref.load %m[%i] : memref<4xf32>
    %gi = memref.load %g[%i] : memref<4xf32>
    %m2 = arith.addf %mi, %gi : f32
    %di = arith.mulf %m2, %gi : f32
    memref.store %m2, %m[%i] : memref<4xf32>
    memref.store %di, %d[%i] : memref<4xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %di = memref.load %d[%i] : memref<4xf32>
    %wi = memref.load %w[%i] : memref<4xf32>
    %n = arith.subf %wi, %di : f32
    memref.store %n, %new[%i] : memref<4xf32>
    scf.reduce
  }
  memref.dealloc %d : memref<4xf32>
  zero.all_gather_buffer %new, %full on @dp : memref<4xf32>, memref<8xf32>
  memref.dealloc %new : memref<4xf32>
  return
}
zero.mesh @dp(shape = [2])

// -----

// Not every gradient bucket is freed once copied down: one aligned beyond
// the runtime's 64 bytes (whose aligned pointer may not be the allocated
// one), and one that an op after the wait touches, are freed after the
// wait; the staging buffers, which only the queued update uses, by the
// queue.
// CHECK-LABEL: func.func @frees_after_wait
// CHECK: %[[WIDE:.*]] = memref.alloc() {alignment = 128 : i64} : memref<8xf32>
// CHECK: %[[LATER:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NOT: zero.queued}
// CHECK: call @zero_rt_host_queue_update
// CHECK-NEXT: memref.dealloc %{{.*}} {zero.queued, zero.staging} : memref<4xf32>
// CHECK-NEXT: memref.dealloc %{{.*}} {zero.queued, zero.staging} : memref<4xf32>
// CHECK-NEXT: call @zero_rt_host_queue_join() : () -> ()
// CHECK-NEXT: scf.parallel
// CHECK: memref.store %{{.*}}, %[[LATER]]
// CHECK: memref.dealloc %[[LATER]] : memref<8xf32>
// CHECK-NEXT: memref.dealloc %[[WIDE]] : memref<8xf32>
// CHECK-NEXT: return
// expected-remark @below {{zero-offload-to-host: @frees_after_wait: 1 loop nest(s) on the host, 2 device buffer(s) copied; 1 op(s) on the rank's host queue beside its stream (1 update(s) with their copies, in 1 chunk(s) by the cost model), 0 buffer(s) freed once copied down, 2 host staging buffer(s) freed by the queue, 0 after a wait, 1 wait(s), 3 op(s) moved after one}}
func.func @frees_after_wait(%m: memref<4xf32> {zero.memory = "host"}, %full: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %wide = memref.alloc() {alignment = 128 : i64} : memref<8xf32>
  %later = memref.alloc() : memref<8xf32>
  zero.reduce_scatter_buffer %full, %wide on @dp reduce = sum : memref<16xf32>, memref<8xf32>
  zero.reduce_scatter_buffer %full, %later on @dp reduce = sum : memref<16xf32>, memref<8xf32>
  %g = memref.subview %wide[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  %h = memref.subview %later[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %mi = memref.load %m[%i] : memref<4xf32>
    %gi = memref.load %g[%i] : memref<4xf32, strided<[1], offset: 4>>
    %hi = memref.load %h[%i] : memref<4xf32, strided<[1], offset: 4>>
    %s = arith.addf %gi, %hi : f32
    %m2 = arith.addf %mi, %s : f32
    memref.store %m2, %m[%i] : memref<4xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %zero, %later[%i] : memref<8xf32>
    scf.reduce
  }
  memref.dealloc %wide : memref<8xf32>
  memref.dealloc %later : memref<8xf32>
  return
}
zero.mesh @dp(shape = [2])

// -----

// Iteration i reads the gradient's element 3 - i: its staging buffer does
// not split by the iterations, so the update's call copies it whole
// before the first chunk (its bytes negated in the table: -16). The
// bucket, which only that copy reads, is still freed once copied down.
// CHECK-LABEL: func.func @by_copy
// CHECK: %[[BUCKET:.*]] = memref.alloc() : memref<8xf32>
// CHECK: call @zero_rt_host_queue_fence() : () -> ()
// CHECK: %[[WHOLE:.*]] = llvm.mlir.constant(-16 : i64) : i64
// CHECK: llvm.store %[[WHOLE]], %{{.*}} : i64, !llvm.ptr
// CHECK: call @zero_rt_host_queue_update(
// CHECK-NEXT: memref.dealloc %[[BUCKET]] {zero.queued} : memref<8xf32>
// CHECK-NEXT: memref.dealloc %{{.*}} {zero.queued, zero.staging} : memref<4xf32>
// CHECK-NEXT: call @zero_rt_host_queue_join() : () -> ()
// CHECK-NOT: memref.copy
// expected-remark @below {{zero-offload-to-host: @by_copy: 1 loop nest(s) on the host, 1 device buffer(s) copied; 1 op(s) on the rank's host queue beside its stream (1 update(s) with their copies, in 1 chunk(s) by the cost model), 1 buffer(s) freed once copied down, 1 host staging buffer(s) freed by the queue, 0 after a wait, 1 wait(s), 0 op(s) moved after one}}
func.func @by_copy(%m: memref<4xf32> {zero.memory = "host"}, %full: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %bucket = memref.alloc() : memref<8xf32>
  zero.reduce_scatter_buffer %full, %bucket on @dp reduce = sum : memref<16xf32>, memref<8xf32>
  %g = memref.subview %bucket[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %r = arith.subi %c3, %i : index
    %mi = memref.load %m[%i] : memref<4xf32>
    %gi = memref.load %g[%r] : memref<4xf32, strided<[1], offset: 4>>
    %m2 = arith.addf %mi, %gi : f32
    memref.store %m2, %m[%i] : memref<4xf32>
    scf.reduce
  }
  memref.dealloc %bucket : memref<8xf32>
  return
}
zero.mesh @dp(shape = [2])

// -----

// An update whose copy out writes the buffer another of its copies reads
// (here one bucket, read at [0, 4) and written at [4, 8)) cannot go in
// chunks, where a chunk's copy out may come before a later chunk's copy in:
// its copies and its loop go to the queue one by one, in order (the new
// values through the host buffer of those read, which the queue frees
// after them).
// CHECK-LABEL: func.func @op_by_op
// CHECK: call @zero_rt_host_queue_fence() : () -> ()
// CHECK-NEXT: memref.copy %{{.*}}, %{{.*}} {zero.queued} : memref<4xf32, strided<[1]>> to memref<4xf32>
// CHECK: call @zero_rt_host_queue_for(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, i64, i64) -> ()
// CHECK: memref.copy %{{.*}}, %{{.*}} {zero.queued} : memref<4xf32> to memref<4xf32, strided<[1], offset: 4>>
// CHECK-NEXT: memref.dealloc %{{.*}} {zero.queued, zero.staging} : memref<4xf32>
// CHECK-NEXT: call @zero_rt_host_queue_join() : () -> ()
// expected-remark @below {{zero-offload-to-host: @op_by_op: 1 loop nest(s) on the host, 2 device buffer(s) copied (1 back through the host buffer of one read); 3 op(s) on the rank's host queue beside its stream (0 update(s) with their copies, in 0 chunk(s) by the cost model), 0 buffer(s) freed once copied down, 1 host staging buffer(s) freed by the queue, 0 after a wait, 1 wait(s), 0 op(s) moved after one}}
func.func @op_by_op(%m: memref<4xf32> {zero.memory = "host"}, %bucket: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %g = memref.subview %bucket[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  %o = memref.subview %bucket[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %mi = memref.load %m[%i] : memref<4xf32>
    %gi = memref.load %g[%i] : memref<4xf32, strided<[1]>>
    %m2 = arith.addf %mi, %gi : f32
    memref.store %m2, %m[%i] : memref<4xf32>
    memref.store %m2, %o[%i] : memref<4xf32, strided<[1], offset: 4>>
    scf.reduce
  }
  return
}

// -----

// A 2-D nest: its outer loop's iterations are independent and go to the
// queue as its task; the inner loop runs within an iteration (as a sum's
// sequential loop does in LAMB's norms).
// CHECK-LABEL: func.func @nested
// CHECK: call @zero_rt_host_queue_for(
// CHECK: call @zero_rt_host_queue_join()
// CHECK-LABEL: func.func private @nested_host0
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.store
// CHECK: } {zero.host}
// expected-remark @below {{zero-offload-to-host: @nested: 1 loop nest(s) on the host, 0 device buffer(s) copied; 1 op(s) on the rank's host queue beside its stream}}
func.func @nested(%m: memref<2x2xf32> {zero.memory = "host"}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %half = arith.constant 0.5 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c2, %c2) step (%c1, %c1) {
    %x = memref.load %m[%i, %j] : memref<2x2xf32>
    %y = arith.mulf %x, %half : f32
    memref.store %y, %m[%i, %j] : memref<2x2xf32>
    scf.reduce
  }
  return
}

// -----

// A host loop that uses a value its task cannot take (a buffer of dynamic
// shape) cannot be a task of the queue: the host's work stays in order on
// the rank's thread, and a remark at the value says so.
// CHECK-LABEL: func.func @dynamic
// CHECK-NOT: zero_rt_host_queue
// CHECK: scf.for
// CHECK: } {zero.host}
// expected-remark @below {{zero-offload-to-host: @dynamic: 1 loop nest(s) on the host, 0 device buffer(s) copied}}
func.func @dynamic(
    // expected-remark @below {{zero-offload-to-host: @dynamic: the host's work runs in order on the rank's thread, not beside its stream: a host loop uses a value of type 'memref<?xf32>', which its task cannot take (a number or a buffer of static shape)}}
    %m: memref<?xf32> {zero.memory = "host"}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %m, %c0 : memref<?xf32>
  %half = arith.constant 0.5 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %m[%i] : memref<?xf32>
    %y = arith.mulf %x, %half : f32
    memref.store %y, %m[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// Two updates on the queue, and a reader of each one's new weight: the
// reader of the first waits only for the queue's work up to the first
// update (zero_rt_host_queue_mark just after it gives the ticket,
// zero_rt_host_queue_wait takes it), so that it goes on while the queue
// runs the second; the reader of the second follows the rank's full wait.
// Each update's staging buffer is freed by the queue right after it, and
// the first's free reaches the queue before the second's staging is
// taken: the rank's staging budget waits for that free.
// CHECK-LABEL: func.func @first_part
// CHECK-SAME: (%[[M1:.*]]: memref<4xf32> {zero.memory = "host"}, %[[M2:.*]]: memref<4xf32> {zero.memory = "host"}, %[[W1:.*]]: memref<4xf32>, %[[W2:.*]]: memref<4xf32>, %[[O1:.*]]: memref<4xf32>, %[[O2:.*]]: memref<4xf32>)
// CHECK: %[[S1:.*]] = zero.host_alloc staging : memref<4xf32>
// CHECK: call @zero_rt_host_queue_update(
// CHECK-NEXT: %[[TICKET:.*]] = call @zero_rt_host_queue_mark() : () -> i64
// CHECK-NEXT: memref.dealloc %[[S1]] {zero.queued, zero.staging}
// CHECK-NEXT: %[[S2:.*]] = zero.host_alloc staging : memref<4xf32>
// CHECK-NOT: zero_rt_host_queue_fence
// CHECK: call @zero_rt_host_queue_update(
// CHECK-NEXT: memref.dealloc %[[S2]] {zero.queued, zero.staging}
// CHECK-NOT: zero_rt_host_queue_mark
// CHECK: call @zero_rt_host_queue_wait(%[[TICKET]]) : (i64) -> ()
// CHECK-NOT: zero_rt_host_queue_join
// CHECK: memref.load %[[W1]]
// CHECK: memref.store %{{.*}}, %[[O1]]
// CHECK: call @zero_rt_host_queue_join() : () -> ()
// CHECK: memref.load %[[W2]]
// CHECK: memref.store %{{.*}}, %[[O2]]
// CHECK: return
// expected-remark @below {{zero-offload-to-host: @first_part: 2 loop nest(s) on the host, 2 device buffer(s) copied; 2 op(s) on the rank's host queue beside its stream (2 update(s) with their copies, in 2 chunk(s) by the cost model), 0 buffer(s) freed once copied down, 2 host staging buffer(s) freed by the queue, 0 after a wait, 1 wait(s) and 1 for the queue's work up to an op, 2 op(s) moved after one}}
func.func @first_part(%m1: memref<4xf32> {zero.memory = "host"},
                      %m2: memref<4xf32> {zero.memory = "host"},
                      %w1: memref<4xf32>, %w2: memref<4xf32>,
                      %o1: memref<4xf32>, %o2: memref<4xf32>)
    -> (memref<4xf32>, memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %b = arith.constant 0.9 : f32
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %mi = memref.load %m1[%i] : memref<4xf32>
    %wi = memref.load %w1[%i] : memref<4xf32>
    %m2i = arith.mulf %mi, %b : f32
    %w2i = arith.subf %wi, %m2i : f32
    memref.store %m2i, %m1[%i] : memref<4xf32>
    memref.store %w2i, %w1[%i] : memref<4xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %mi = memref.load %m2[%i] : memref<4xf32>
    %wi = memref.load %w2[%i] : memref<4xf32>
    %m2i = arith.mulf %mi, %b : f32
    %w2i = arith.subf %wi, %m2i : f32
    memref.store %m2i, %m2[%i] : memref<4xf32>
    memref.store %w2i, %w2[%i] : memref<4xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %wi = memref.load %w1[%i] : memref<4xf32>
    memref.store %wi, %o1[%i] : memref<4xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %wi = memref.load %w2[%i] : memref<4xf32>
    memref.store %wi, %o2[%i] : memref<4xf32>
    scf.reduce
  }
  return %m1, %m2 : memref<4xf32>, memref<4xf32>
}

// -----

// The program's own copy down the link, from a device buffer into host
// memory (zero-gpu-copies leaves it a copy: here a weight gathered on the
// device, written into its host argument), goes to the queue with the
// update, in order with the queue's reads of what it overwrites: the
// update reads the old weight first. The gathered buffer, which only that
// copy reads, is the queue's to free once copied, not the rank's after its
// wait.
zero.mesh @dp(shape = [2])
// CHECK-LABEL: func.func @copies_down
// CHECK-SAME: (%[[M:.*]]: memref<4xf32> {zero.memory = "host"}, %[[P:.*]]: memref<8xf32> {zero.memory = "host"}, %[[SHARD:.*]]: memref<4xf32>, %[[W:.*]]: memref<4xf32>)
// CHECK: call @zero_rt_host_queue_fence() : () -> ()
// CHECK: call @zero_rt_host_queue_update(
// CHECK: zero.all_gather_buffer %[[SHARD]], %[[G:.*]] on @dp
// CHECK-NEXT: call @zero_rt_host_queue_fence() : () -> ()
// CHECK-NEXT: memref.copy %[[G]], %[[P]] {zero.queued} : memref<8xf32> to memref<8xf32>
// CHECK-NEXT: memref.dealloc %[[G]] {zero.queued} : memref<8xf32>
// CHECK-NEXT: call @zero_rt_host_queue_join() : () -> ()
// CHECK-NEXT: return
// expected-remark @below {{zero-offload-to-host: @copies_down: 1 loop nest(s) on the host, 1 device buffer(s) copied; 2 op(s) on the rank's host queue beside its stream (1 update(s) with their copies, in 1 chunk(s) by the cost model), 1 buffer(s) freed once copied down}}
func.func @copies_down(%m: memref<4xf32> {zero.memory = "host"},
                       %p: memref<8xf32> {zero.memory = "host"},
                       %shard: memref<4xf32>, %w: memref<4xf32>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %b = arith.constant 0.9 : f32
  %g = memref.alloc() : memref<8xf32>
  zero.all_gather_buffer %shard, %g on @dp : memref<4xf32>, memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %mi = memref.load %m[%i] : memref<4xf32>
    %pi = memref.load %p[%i] : memref<8xf32>
    %m2 = arith.mulf %mi, %b : f32
    %w2 = arith.subf %pi, %m2 : f32
    memref.store %m2, %m[%i] : memref<4xf32>
    memref.store %w2, %w[%i] : memref<4xf32>
    scf.reduce
  }
  memref.copy %g, %p : memref<8xf32> to memref<8xf32>
  memref.dealloc %g : memref<8xf32>
  return %m : memref<4xf32>
}

// -----

// Negative: a gathered buffer that asks for more alignment than the
// runtime's allocators give (its aligned pointer may not be the allocated
// one, which the queue's free takes) is freed by the rank after its wait,
// though only the queue's copy reads it.
zero.mesh @dp(shape = [2])
// CHECK-LABEL: func.func @copies_down_aligned
// CHECK: memref.copy %[[G:.*]], %{{.*}} {zero.queued} : memref<8xf32> to memref<8xf32>
// CHECK-NEXT: call @zero_rt_host_queue_join() : () -> ()
// CHECK-NEXT: memref.dealloc %[[G]] : memref<8xf32>
// expected-remark @below {{zero-offload-to-host: @copies_down_aligned: 1 loop nest(s) on the host, 1 device buffer(s) copied; 2 op(s) on the rank's host queue beside its stream (1 update(s) with their copies, in 1 chunk(s) by the cost model), 0 buffer(s) freed once copied down}}
func.func @copies_down_aligned(%m: memref<4xf32> {zero.memory = "host"},
                               %p: memref<8xf32> {zero.memory = "host"},
                               %shard: memref<4xf32>, %w: memref<4xf32>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %b = arith.constant 0.9 : f32
  %g = memref.alloc() {alignment = 128 : i64} : memref<8xf32>
  zero.all_gather_buffer %shard, %g on @dp : memref<4xf32>, memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %mi = memref.load %m[%i] : memref<4xf32>
    %pi = memref.load %p[%i] : memref<8xf32>
    %m2 = arith.mulf %mi, %b : f32
    %w2 = arith.subf %pi, %m2 : f32
    memref.store %m2, %m[%i] : memref<4xf32>
    memref.store %w2, %w[%i] : memref<4xf32>
    scf.reduce
  }
  memref.copy %g, %p : memref<8xf32> to memref<8xf32>
  memref.dealloc %g : memref<8xf32>
  return %m : memref<4xf32>
}

// -----

// A staging buffer that the update only writes and copies out (the new
// weight shard of a state the host holds whole: offload=params, or a
// delayed update reading last step's gradient from host memory) is the
// queue's: it takes it from the rank's staging arena as it runs the
// update, and gives it back once the copy up is done. The rank neither
// allocates nor frees it (the rank queues a step's updates well ahead of
// its queue, a delayed step all at its start, and would hold them all);
// it writes 0 where the buffer's address goes, in the context's slot and
// as the copy's source, and the call's staged triple (bytes, context slot,
// copy) tells the queue where to put it.
// CHECK-LABEL: func.func @staged_by_queue
// CHECK: %[[TABLE:.*]] = llvm.alloca
// CHECK: %[[STAGED:.*]] = llvm.alloca
// CHECK: %[[CONTEXT:.*]] = llvm.alloca
// CHECK-NOT: zero.host_alloc
// CHECK: call @zero_rt_host_queue_fence() : () -> ()
// The context's third slot (after %m and %g) is the staging buffer's.
// CHECK: %[[NONE:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[NONE64:.*]] = arith.index_cast %[[NONE]] : index to i64
// CHECK-NEXT: %[[SLOT:.*]] = llvm.getelementptr %[[CONTEXT]][2]
// CHECK-NEXT: llvm.store %[[NONE64]], %[[SLOT]] : i64, !llvm.ptr
// The copy's source.
// CHECK: %[[NOSOURCE:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[NOSOURCE64:.*]] = arith.index_cast %[[NOSOURCE]] : index to i64
// CHECK-NEXT: %[[NULL:.*]] = llvm.inttoptr %[[NOSOURCE64]]
// CHECK-NEXT: %[[FROM:.*]] = llvm.getelementptr %[[TABLE]][1]
// CHECK-NEXT: llvm.store %[[NULL]], %[[FROM]]
// The staged triple: 16 bytes, context slot 2, copy 0.
// CHECK: %[[BYTES:.*]] = llvm.mlir.constant(16 : i64) : i64
// CHECK-NEXT: %[[AT0:.*]] = llvm.getelementptr %[[STAGED]][0]
// CHECK-NEXT: llvm.store %[[BYTES]], %[[AT0]]
// CHECK-NEXT: %[[CSLOT:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK-NEXT: %[[AT1:.*]] = llvm.getelementptr %[[STAGED]][1]
// CHECK-NEXT: llvm.store %[[CSLOT]], %[[AT1]]
// CHECK-NEXT: %[[COPY:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-NEXT: %[[AT2:.*]] = llvm.getelementptr %[[STAGED]][2]
// CHECK-NEXT: llvm.store %[[COPY]], %[[AT2]]
// CHECK: %[[NIN:.*]] = arith.constant 0 : i64
// CHECK-NEXT: %[[NOUT:.*]] = arith.constant 1 : i64
// CHECK-NEXT: %[[CHUNK:.*]] = arith.constant 0 : i64
// CHECK-NEXT: %[[NSTAGED:.*]] = arith.constant 1 : i64
// CHECK-NEXT: call @zero_rt_host_queue_update(%{{.*}}, %[[CONTEXT]], %{{.*}}, %{{.*}}, %[[TABLE]], %[[NIN]], %[[NOUT]], %[[CHUNK]], %[[STAGED]], %[[NSTAGED]])
// CHECK-NOT: memref.dealloc
// CHECK: call @zero_rt_host_queue_join() : () -> ()
// CHECK-NEXT: zero.all_gather_buffer
// expected-remark @below {{zero-offload-to-host: @staged_by_queue: 1 loop nest(s) on the host, 1 device buffer(s) copied; 1 op(s) on the rank's host queue beside its stream (1 update(s) with their copies, in 1 chunk(s) by the cost model), 0 buffer(s) freed once copied down, 1 host staging buffer(s) freed by the queue (1 of them taken by the queue as it runs their update), 0 after a wait, 1 wait(s), 1 op(s) moved after one}}
func.func @staged_by_queue(%m: memref<4xf32> {zero.memory = "host"},
                           %g: memref<4xf32> {zero.memory = "host"},
                           %w: memref<8xf32>, %act: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %b = arith.constant 0.9 : f32
  %r = zero.replica_index on @dp : index
  %o = arith.muli %r, %c4 : index
  %part = memref.subview %w[%o] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: ?>>
  // The update: the new weight shard comes from the host's state alone.
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %mi = memref.load %m[%i] : memref<4xf32>
    %gi = memref.load %g[%i] : memref<4xf32>
    %mb = arith.mulf %mi, %b : f32
    %m2 = arith.addf %mb, %gi : f32
    %w2 = arith.mulf %m2, %b : f32
    memref.store %m2, %m[%i] : memref<4xf32>
    memref.store %w2, %part[%i] : memref<4xf32, strided<[1], offset: ?>>
    scf.reduce
  }
  // The forward pass.
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %a = memref.load %act[%i] : memref<64xf32>
    %a2 = arith.mulf %a, %b : f32
    memref.store %a2, %act[%i] : memref<64xf32>
    scf.reduce
  }
  zero.all_gather_buffer %part, %w on @dp : memref<4xf32, strided<[1], offset: ?>>, memref<8xf32>
  return
}
zero.mesh @dp(shape = [2])

// -----

// A host nest that reads what a collective made of the queue's work (here
// the gather of the update's new shard) must follow the rank's wait: it is
// the rank's, not the queue's, and so is its host buffer, a plain host
// allocation that the rank frees; staging is only what the queue takes or
// gives back.
// CHECK-LABEL: func.func @after_wait
// CHECK: %[[STAGING:.*]] = zero.host_alloc staging : memref<4xf32>
// CHECK: call @zero_rt_host_queue_update
// CHECK-NEXT: memref.dealloc %[[STAGING]] {zero.queued, zero.staging}
// CHECK-NOT: staging
// CHECK: %[[HOST:.*]] = zero.host_alloc : memref<8xf32>
// CHECK-NEXT: call @zero_rt_host_queue_join() : () -> ()
// CHECK: zero.all_gather_buffer %{{.*}}, %[[WHOLE:[^ ]*]] on @dp
// CHECK-NEXT: memref.copy %[[WHOLE]], %[[HOST]]
// CHECK: call @zero_rt_parallel_for
// CHECK-NOT: staging
// CHECK: memref.dealloc %[[HOST]] : memref<8xf32>
// CHECK-NOT: staging
// CHECK: return
// expected-remark @below {{zero-offload-to-host: @after_wait: 2 loop nest(s) on the host, 3 device buffer(s) copied (1 back through the host buffer of one read); 1 op(s) on the rank's host queue beside its stream (1 update(s) with their copies, in 1 chunk(s) by the cost model), 0 buffer(s) freed once copied down, 1 host staging buffer(s) freed by the queue, 1 after a wait, 1 wait(s), 5 op(s) moved after one}}
func.func @after_wait(%m: memref<4xf32> {zero.memory = "host"},
                      %v: memref<8xf32> {zero.memory = "host"},
                      %g: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %u = memref.alloc() : memref<4xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %mi = memref.load %m[%i] : memref<4xf32>
    %gi = memref.load %g[%i] : memref<4xf32>
    %m2 = arith.addf %mi, %gi : f32
    memref.store %m2, %m[%i] : memref<4xf32>
    memref.store %m2, %u[%i] : memref<4xf32>
    scf.reduce
  }
  %s = memref.alloc() : memref<8xf32>
  zero.all_gather_buffer %u, %s on @dp : memref<4xf32>, memref<8xf32>
  memref.dealloc %u : memref<4xf32>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %vi = memref.load %v[%i] : memref<8xf32>
    %si = memref.load %s[%i] : memref<8xf32>
    %v2 = arith.addf %vi, %si : f32
    memref.store %v2, %v[%i] : memref<8xf32>
    scf.reduce
  }
  memref.dealloc %s : memref<8xf32>
  return
}
zero.mesh @dp(shape = [2])

// -----

// A weight gathered on the device from the queue's update, copied into its
// host argument (offload=params under delay-update): the copy follows the
// rank's wait, but the rank only starts it (zero.copy_down: on a GPU on its
// copy stream, zero_rt_gpu_copy_down) and goes on; the free of the gathered
// buffer keeps its mark (on a GPU its reuse waits for the copy), and a
// join, which waits for the copy, follows.
// CHECK-LABEL: func.func @copy_down_after_wait
// CHECK: call @zero_rt_host_queue_update
// CHECK: call @zero_rt_host_queue_join() : () -> ()
// CHECK-NEXT: %[[WHOLE:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: zero.all_gather_buffer %{{.*}}, %[[WHOLE]] on @dp
// CHECK-NEXT: memref.copy %[[WHOLE]], %{{.*}} {zero.copy_down}
// CHECK-NEXT: memref.dealloc %[[WHOLE]] {zero.queued} : memref<8xf32>
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: call @zero_rt_host_queue_join() : () -> ()
// CHECK-NEXT: return
// expected-remark @below {{zero-offload-to-host: @copy_down_after_wait: 1 loop nest(s) on the host, 2 device buffer(s) copied (1 back through the host buffer of one read); 1 op(s) on the rank's host queue beside its stream (1 update(s) with their copies, in 1 chunk(s) by the cost model), 1 buffer(s) freed once copied down, 1 host staging buffer(s) freed by the queue, 1 after a wait, 1 copies down into host memory that the rank only starts, 2 wait(s), 4 op(s) moved after one}}
func.func @copy_down_after_wait(%m: memref<4xf32> {zero.memory = "host"},
                                %w: memref<8xf32> {zero.memory = "host"},
                                %g: memref<4xf32>, %act: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %b = arith.constant 2.0 : f32
  %u = memref.alloc() : memref<4xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %mi = memref.load %m[%i] : memref<4xf32>
    %gi = memref.load %g[%i] : memref<4xf32>
    %m2 = arith.addf %mi, %gi : f32
    memref.store %m2, %m[%i] : memref<4xf32>
    memref.store %m2, %u[%i] : memref<4xf32>
    scf.reduce
  }
  %s = memref.alloc() : memref<8xf32>
  zero.all_gather_buffer %u, %s on @dp : memref<4xf32>, memref<8xf32>
  memref.dealloc %u : memref<4xf32>
  memref.copy %s, %w : memref<8xf32> to memref<8xf32>
  memref.dealloc %s : memref<8xf32>
  // The forward pass, which the queue's update goes on beside.
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %a = memref.load %act[%i] : memref<64xf32>
    %a2 = arith.mulf %a, %b : f32
    memref.store %a2, %act[%i] : memref<64xf32>
    scf.reduce
  }
  return
}
zero.mesh @dp(shape = [2])

// -----

// The same, but a host loop after the copy reads the host argument: the
// rank must have the copy done there, so it copies at once, as before, and
// frees the gathered buffer itself.
// CHECK-LABEL: func.func @copy_down_read_after
// CHECK: call @zero_rt_host_queue_join() : () -> ()
// CHECK: zero.all_gather_buffer
// CHECK-NEXT: memref.copy %{{.*}}, %{{.*}} : memref<8xf32> to memref<8xf32>
// CHECK-NOT: zero.copy_down
// CHECK-NOT: zero.queued
// CHECK: return
// expected-remark @below {{zero-offload-to-host: @copy_down_read_after: 1 loop nest(s) on the host, 2 device buffer(s) copied (1 back through the host buffer of one read); 1 op(s) on the rank's host queue beside its stream (1 update(s) with their copies, in 1 chunk(s) by the cost model), 0 buffer(s) freed once copied down, 1 host staging buffer(s) freed by the queue, 1 after a wait, 1 wait(s),}}
func.func @copy_down_read_after(%m: memref<4xf32> {zero.memory = "host"},
                                %w: memref<8xf32> {zero.memory = "host"},
                                %g: memref<4xf32>, %sum: memref<f32> {zero.memory = "host"}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %u = memref.alloc() : memref<4xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %mi = memref.load %m[%i] : memref<4xf32>
    %gi = memref.load %g[%i] : memref<4xf32>
    %m2 = arith.addf %mi, %gi : f32
    memref.store %m2, %m[%i] : memref<4xf32>
    memref.store %m2, %u[%i] : memref<4xf32>
    scf.reduce
  }
  %s = memref.alloc() : memref<8xf32>
  zero.all_gather_buffer %u, %s on @dp : memref<4xf32>, memref<8xf32>
  memref.dealloc %u : memref<4xf32>
  memref.copy %s, %w : memref<8xf32> to memref<8xf32>
  memref.dealloc %s : memref<8xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    %wi = memref.load %w[%i] : memref<8xf32>
    %t = memref.load %sum[] : memref<f32>
    %t2 = arith.addf %t, %wi : f32
    memref.store %t2, %sum[] : memref<f32>
  }
  return
}
zero.mesh @dp(shape = [2])
