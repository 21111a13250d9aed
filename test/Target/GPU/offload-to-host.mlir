// zero-offload-to-host: the loop nests on state placed in host memory
// (zero.memory = "host") run on the host as scf.for nests; the device
// buffers they read are copied to host buffers before, those they write
// copied back after; temporaries only host loops use are host buffers.
// What it cannot run on the host leaves the function on the device, with a
// remark; a CPU program (gpu=false) refuses the marks.
// RUN: zero-opt %s --split-input-file --zero-offload-to-host=parallel=false --verify-diagnostics | FileCheck %s
// RUN: zero-opt %s --split-input-file --zero-offload-to-host=overlap=false 2>/dev/null | FileCheck %s --check-prefix=CORES
// RUN: not zero-opt %s --split-input-file --zero-offload-to-host=gpu=false 2>&1 | FileCheck %s --check-prefix=CPU

// CPU: error: zero-offload-to-host: @moment keeps state in host memory (zero-offload-state, offload=), but a CPU program has no device to offload from: compile it for the GPU (zero-compile --target=cuda), or run it on the GPU's CPU replica (zero-run --gpu-loops)

// The gradient shard is a view of the reduce-scatter's bucket on the device:
// copied in; the moment, in host memory, is updated in place; the new
// weight shard (on the device) is written into a host buffer and copied
// back.
// Across the host's cores (parallel, the default), the loop is a task over
// a range of its iterations, its outside values passed through a context of
// 64-bit slots (buffers as addresses), its constants copied in; the caller
// fills the context and calls zero_rt_parallel_for.
// CORES-LABEL: func.func @moment
// CORES: %[[SLOTS:.*]] = llvm.mlir.constant(3 : i64) : i64
// CORES: %[[CONTEXT:.*]] = llvm.alloca %[[SLOTS]] x i64 : (i64) -> !llvm.ptr
// CORES-COUNT-3: llvm.store %{{.*}}, %{{.*}} : i64, !llvm.ptr
// CORES: %[[TASK:.*]] = constant @moment_host0 : (!llvm.ptr, i64, i64) -> ()
// CORES: %[[POINTER:.*]] = builtin.unrealized_conversion_cast %[[TASK]] : (!llvm.ptr, i64, i64) -> () to !llvm.ptr
// CORES: call @zero_rt_parallel_for(%[[POINTER]], %[[CONTEXT]], %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, i64, i64) -> ()
// CORES-NOT: scf.for
// CORES: memref.copy
// CORES-LABEL: func.func private @moment_host0
// CORES-SAME: (%[[C:.*]]: !llvm.ptr, %[[BEGIN:.*]]: i64, %[[END:.*]]: i64) attributes {zero.host_task}
// CORES: arith.constant 0.899999976 : f32
// CORES: llvm.getelementptr %[[C]][0] : (!llvm.ptr) -> !llvm.ptr, i64
// CORES: builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<4xf32>
// CORES: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CORES: memref.store
// CORES: } {zero.host}
// CORES: return

// The module records what the launcher keeps in host memory.
// CHECK: module attributes {zero.host_memory = {moment = {arguments = array<i64: 0>, results = array<i64: 0>}}}
// CHECK-LABEL: func.func @moment
// CHECK-SAME: (%[[M:.*]]: memref<4xf32> {zero.memory = "host"}, %[[BUCKET:.*]]: memref<8xf32>, %[[W:.*]]: memref<4xf32>)
// CHECK: %[[G:.*]] = memref.subview %[[BUCKET]][4] [4] [1]
// CHECK: %[[GH:.*]] = zero.host_alloc : memref<4xf32>
// CHECK: memref.copy %[[G]], %[[GH]] : memref<4xf32, strided<[1], offset: 4>> to memref<4xf32>
// CHECK: %[[WH:.*]] = zero.host_alloc : memref<4xf32>
// CHECK: memref.copy %[[W]], %[[WH]]
// CHECK: scf.for %[[I:.*]] =
// CHECK: memref.load %[[M]][%[[I]]]
// CHECK: memref.load %[[GH]][%[[I]]]
// CHECK: memref.store %{{.*}}, %[[M]][%[[I]]]
// CHECK: memref.store %{{.*}}, %[[WH]][%[[I]]]
// CHECK: } {zero.host}
// CHECK-NOT: memref.copy %[[GH]]
// CHECK: memref.copy %[[WH]], %[[W]]
// CHECK: memref.dealloc %[[WH]]
// CHECK: memref.dealloc %[[GH]]
// A nest on device buffers only stays a parallel loop, for a kernel.
// CHECK: scf.parallel
// CHECK: return %[[M]]
// expected-remark @below {{zero-offload-to-host: @moment: 1 loop nest(s) on the host, 2 device buffer(s) copied}}
func.func @moment(%m: memref<4xf32> {zero.memory = "host"}, %bucket: memref<8xf32>,
                  %w: memref<4xf32>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %b = arith.constant 0.9 : f32
  %g = memref.subview %bucket[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
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
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %gi = memref.load %bucket[%i] : memref<8xf32>
    memref.store %gi, %bucket[%c4] : memref<8xf32>
    scf.reduce
  }
  return %m : memref<4xf32>
}

// -----

// A temporary that only host loops read lives in host memory, and the nest
// that writes it (reading the offloaded %m) runs on the host too: no copies.
// CHECK-LABEL: func.func @temporary
// CHECK: %[[T:.*]] = zero.host_alloc : memref<4xf32>
// CHECK-NOT: memref.copy
// CHECK: } {zero.host}
// CHECK: } {zero.host}
// CHECK: memref.dealloc %[[T]]
// expected-remark @below {{zero-offload-to-host: @temporary: 2 loop nest(s) on the host, 0 device buffer(s) copied}}
func.func @temporary(%m: memref<4xf32> {zero.memory = "host"},
                     %v: memref<4xf32> {zero.memory = "host"}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %t = memref.alloc() : memref<4xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %mi = memref.load %m[%i] : memref<4xf32>
    memref.store %mi, %t[%i] : memref<4xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %ti = memref.load %t[%i] : memref<4xf32>
    memref.store %ti, %v[%i] : memref<4xf32>
    scf.reduce
  }
  memref.dealloc %t : memref<4xf32>
  return
}

// -----

// A nest on offloaded state that reduces into results: the function stays
// on the device, and the marks go.
// CHECK-NOT: zero.host_memory
// CHECK-LABEL: func.func @reduces
// CHECK-SAME: (%{{.*}}: memref<4xf32>)
// CHECK: scf.parallel
func.func @reduces(%m: memref<4xf32> {zero.memory = "host"}) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  // expected-remark @below {{zero-offload-to-host: @reduces stays on the device: this loop nest on offloaded state reduces into results, which the host loops do not do}}
  %s = scf.parallel (%i) = (%c0) to (%c4) step (%c1) init (%zero) -> f32 {
    %mi = memref.load %m[%i] : memref<4xf32>
    %m2 = arith.mulf %mi, %mi : f32
    memref.store %m2, %m[%i] : memref<4xf32>
    scf.reduce(%mi : f32) {
    ^bb0(%a: f32, %b: f32):
      %r = arith.addf %a, %b : f32
      scf.reduce.return %r : f32
    }
  }
  return %s : f32
}

// -----

// A nest that only reads offloaded state stays a kernel, reading the mapped
// pinned memory: nothing to copy.
// CHECK-LABEL: func.func @reads_only
// CHECK-NOT: zero.host_alloc
// CHECK: scf.parallel
// expected-remark @below {{zero-offload-to-host: @reads_only: 0 loop nest(s) on the host, 0 device buffer(s) copied}}
func.func @reads_only(%m: memref<4xf32> {zero.memory = "host"}, %d: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %x = memref.load %m[%i] : memref<4xf32>
    memref.store %x, %d[%i] : memref<4xf32>
    scf.reduce
  }
  return
}

// -----

// A device buffer viewed inside the nest: a host copy cannot stand in.
// CHECK-LABEL: func.func @view_inside
// CHECK: scf.parallel
func.func @view_inside(%m: memref<4xf32> {zero.memory = "host"}, %d: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  // expected-remark @below {{zero-offload-to-host: @view_inside stays on the device: this loop nest on offloaded state also uses a device buffer of type 'memref<8xf32>' through 'memref.subview', which a host copy cannot stand in for}}
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %v = memref.subview %d[%i] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: ?>>
    %x = memref.load %v[%c0] : memref<4xf32, strided<[1], offset: ?>>
    memref.store %x, %m[%i] : memref<4xf32>
    scf.reduce
  }
  return
}

// -----

// A device view that is not one contiguous range (a member's rows in a
// bucket) crosses the link through a contiguous device buffer: a copy nest
// (a kernel, once mapped) gathers it there before the host loop, and
// scatters it back after.
// CHECK-LABEL: func.func @rows
// CHECK: %[[ROWS:.*]] = memref.subview
// CHECK: %[[HOST:.*]] = zero.host_alloc : memref<2x2xf32>
// CHECK: %[[DEVICE:.*]] = memref.alloc() : memref<2x2xf32>
// CHECK: scf.parallel
// CHECK: memref.load %[[ROWS]]
// CHECK: memref.store %{{.*}}, %[[DEVICE]]
// CHECK: memref.copy %[[DEVICE]], %[[HOST]] : memref<2x2xf32> to memref<2x2xf32>
// CHECK: } {zero.host}
// CHECK: memref.copy %[[HOST]], %[[DEVICE]]
// CHECK: scf.parallel
// CHECK: memref.load %[[DEVICE]]
// CHECK: memref.store %{{.*}}, %[[ROWS]]
// CHECK: memref.dealloc %[[HOST]]
// CHECK: memref.dealloc %[[DEVICE]]
// expected-remark @below {{zero-offload-to-host: @rows: 1 loop nest(s) on the host, 1 device buffer(s) copied}}
func.func @rows(%m: memref<2x2xf32> {zero.memory = "host"}, %bucket: memref<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %rows = memref.subview %bucket[0, 1] [2, 2] [1, 1] : memref<4x4xf32> to memref<2x2xf32, strided<[4, 1], offset: 1>>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c2, %c2) step (%c1, %c1) {
    %x = memref.load %rows[%i, %j] : memref<2x2xf32, strided<[4, 1], offset: 1>>
    %mi = memref.load %m[%i, %j] : memref<2x2xf32>
    %s = arith.addf %x, %mi : f32
    memref.store %s, %m[%i, %j] : memref<2x2xf32>
    memref.store %s, %rows[%i, %j] : memref<2x2xf32, strided<[4, 1], offset: 1>>
    scf.reduce
  }
  return
}

// -----

// Collectives on host memory (offload=params: a weight's shard gathered for
// the forward pass; an all-reduce in place) go through device buffers: the
// input copied up before, the output copied back once the collective is
// done, at its wait when started. NCCL takes device buffers only.
zero.mesh @dp(shape = [2])
// CHECK-LABEL: func.func @gathers
// CHECK-SAME: (%[[W:.*]]: memref<4xf32> {zero.memory = "host"}, %[[OUT:.*]]: memref<8xf32>, %[[S:.*]]: memref<4xf32> {zero.memory = "host"})
// CHECK: %[[UP:.*]] = memref.alloc() : memref<4xf32>
// CHECK: memref.copy %[[W]], %[[UP]]
// CHECK: zero.all_gather_buffer %[[UP]], %[[OUT]] on @dp
// CHECK: memref.dealloc %[[UP]]
// CHECK: %[[INPLACE:.*]] = memref.alloc() : memref<4xf32>
// CHECK: memref.copy %[[S]], %[[INPLACE]]
// CHECK: %[[R:.*]] = zero.all_reduce_buffer %[[INPLACE]], %[[INPLACE]] on @dp reduce = sum
// CHECK: zero.wait %[[R]], %[[INPLACE]], %[[INPLACE]]
// CHECK: memref.copy %[[INPLACE]], %[[S]]
// CHECK: memref.dealloc %[[INPLACE]]
// CHECK-NOT: memref.dealloc %[[INPLACE]]
// expected-remark @below {{zero-offload-to-host: @gathers: 0 loop nest(s) on the host, 0 device buffer(s) copied}}
// expected-remark @below {{zero-offload-to-host: @gathers: 2 collective(s) on host memory moved through device buffers}}
func.func @gathers(%w: memref<4xf32> {zero.memory = "host"}, %out: memref<8xf32>,
                   %s: memref<4xf32> {zero.memory = "host"}) {
  zero.all_gather_buffer %w, %out on @dp : memref<4xf32>, memref<8xf32>
  %r = zero.all_reduce_buffer %s, %s on @dp reduce = sum : memref<4xf32>, memref<4xf32> -> !zero.request
  zero.wait %r, %s, %s : memref<4xf32>, memref<4xf32>
  return
}

// -----

// A delayed update's state (zero-delay-update): the step before's gradient
// shard and the flag are host arguments, so the results that feed them are
// host memory too (the launcher hands each result back as its argument,
// which the host reads). The flag, which only a copy writes, is allocated
// there; the new gradient shard, a reduce-scatter's output on the device,
// is copied before the return into the argument it is the next value of,
// which is donated to it (no pinned memory taken each step), and its
// device buffer freed.
zero.mesh @dp(shape = [2])
// CHECK: module attributes {zero.host_memory = {delayed = {arguments = array<i64: 0, 1>, results = array<i64: 0, 1>}}}
// CHECK-LABEL: func.func @delayed
// CHECK-SAME: %[[G:[a-z0-9]+]]: memref<4xf32> {zero.aliasing_output = 0 : i64, zero.delayed, zero.memory = "host"}
// CHECK: %[[FLAG:.*]] = zero.host_alloc : memref<1xf32>
// CHECK-NEXT: memref.copy %{{.*}}, %[[FLAG]]
// CHECK: zero.reduce_scatter_buffer %{{.*}}, %[[NEW:.*]] on @dp
// CHECK-NEXT: memref.copy %[[NEW]], %[[G]]
// CHECK-NEXT: memref.dealloc %[[NEW]]
// CHECK-NEXT: return %[[G]], %[[FLAG]]
// expected-remark @below {{zero-offload-to-host: @delayed: 0 loop nest(s) on the host, 0 device buffer(s) copied}}
func.func @delayed(%g: memref<4xf32> {zero.memory = "host", zero.delayed},
                   %flag: memref<1xf32> {zero.memory = "host", zero.delayed},
                   %grad: memref<8xf32>, %one: memref<1xf32>)
    -> (memref<4xf32> {zero.state_of = 0 : i64},
        memref<1xf32> {zero.state_of = 1 : i64}) {
  %f = memref.alloc() : memref<1xf32>
  memref.copy %one, %f : memref<1xf32> to memref<1xf32>
  %new = memref.alloc() : memref<4xf32>
  zero.reduce_scatter_buffer %grad, %new on @dp reduce = mean : memref<8xf32>, memref<4xf32>
  return %new, %f : memref<4xf32>, memref<1xf32>
}

// -----

// The same, where the argument is also returned as another result: the new
// shard cannot be copied into it, so it is copied into host memory of its
// own.
zero.mesh @dp(shape = [2])
// CHECK-LABEL: func.func @delayed_argument_returned
// CHECK-SAME: %[[G:[a-z0-9]+]]: memref<4xf32> {zero.delayed, zero.memory = "host"}
// CHECK: zero.reduce_scatter_buffer %{{.*}}, %[[NEW:.*]] on @dp
// CHECK: %[[HOST:.*]] = zero.host_alloc : memref<4xf32>
// CHECK-NEXT: memref.copy %[[NEW]], %[[HOST]]
// CHECK-NEXT: memref.dealloc %[[NEW]]
// CHECK-NEXT: return %[[HOST]], %[[G]]
// expected-remark @below {{zero-offload-to-host: @delayed_argument_returned: 0 loop nest(s) on the host, 0 device buffer(s) copied}}
func.func @delayed_argument_returned(
    %g: memref<4xf32> {zero.memory = "host", zero.delayed},
    %grad: memref<8xf32>)
    -> (memref<4xf32> {zero.state_of = 0 : i64}, memref<4xf32>) {
  %new = memref.alloc() : memref<4xf32>
  zero.reduce_scatter_buffer %grad, %new on @dp reduce = mean : memref<8xf32>, memref<4xf32>
  return %new, %g : memref<4xf32>, memref<4xf32>
}

// -----

// Two delayed gradient shards, which the backward pass makes in the
// reverse of the results' order (the last layer's first): their copies
// into their host arguments go in the order the shards are made, so that
// the rank's host queue, which keeps its work in order, copies each down
// as soon as it is made rather than all after the last.
zero.mesh @dp(shape = [2])
// CHECK-LABEL: func.func @delayed_in_readiness_order
// CHECK-SAME: %[[G0:[a-z0-9]+]]: memref<4xf32> {zero.aliasing_output = 0 : i64, zero.delayed, zero.memory = "host"}
// CHECK-SAME: %[[G1:[a-z0-9]+]]: memref<4xf32> {zero.aliasing_output = 1 : i64, zero.delayed, zero.memory = "host"}
// CHECK: zero.reduce_scatter_buffer %{{.*}}, %[[NEW1:.*]] on @dp
// CHECK: zero.reduce_scatter_buffer %{{.*}}, %[[NEW0:.*]] on @dp
// CHECK-NEXT: memref.copy %[[NEW1]], %[[G1]]
// CHECK-NEXT: memref.dealloc %[[NEW1]]
// CHECK-NEXT: memref.copy %[[NEW0]], %[[G0]]
// CHECK-NEXT: memref.dealloc %[[NEW0]]
// CHECK-NEXT: return %[[G0]], %[[G1]]
// expected-remark @below {{zero-offload-to-host: @delayed_in_readiness_order: 0 loop nest(s) on the host, 0 device buffer(s) copied}}
func.func @delayed_in_readiness_order(
    %g0: memref<4xf32> {zero.memory = "host", zero.delayed},
    %g1: memref<4xf32> {zero.memory = "host", zero.delayed},
    %grad0: memref<8xf32>, %grad1: memref<8xf32>)
    -> (memref<4xf32> {zero.state_of = 0 : i64},
        memref<4xf32> {zero.state_of = 1 : i64}) {
  %new1 = memref.alloc() : memref<4xf32>
  zero.reduce_scatter_buffer %grad1, %new1 on @dp reduce = mean : memref<8xf32>, memref<4xf32>
  %new0 = memref.alloc() : memref<4xf32>
  zero.reduce_scatter_buffer %grad0, %new0 on @dp reduce = mean : memref<8xf32>, memref<4xf32>
  return %new0, %new1 : memref<4xf32>, memref<4xf32>
}

// -----

// A result that feeds host state but is not a static buffer: the function
// stays on the device.
// CHECK-LABEL: func.func @dynamic_state
// CHECK-SAME: (%{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>)
// CHECK-NOT: zero.host_alloc
func.func @dynamic_state(%g: memref<?xf32> {zero.memory = "host"},
                         %new: memref<?xf32>)
    -> (memref<?xf32> {zero.state_of = 0 : i64}) {
  // expected-remark @below {{zero-offload-to-host: @dynamic_state stays on the device: result 0 is the next value of host state, but its type 'memref<?xf32>' is not a static buffer that host memory can hold}}
  return %new : memref<?xf32>
}

// -----

// AdamW's bias-corrected moment, f(m) = m * c of the new moment m, read by
// the weight's kernel: the new moment is copied up into the temporary after
// the host's loop, and the kernel computes f of it, lane by lane. The host
// no longer stores f, and the temporary needs no host copy. Only a kernel
// reads it, so the temporary is taken where it is copied up, not where the
// program made it: with the rank's host queue (CORES), after the rank waits
// for the host's loop.
// CHECK-LABEL: func.func @bias_corrected
// CHECK-SAME: (%[[M:.*]]: memref<8xf32> {zero.memory = "host"}, %[[G:.*]]: memref<8xf32>, %[[W:.*]]: memref<8xf32>, %[[C:.*]]: f32)
// CHECK-NOT: memref.alloc
// CHECK: %[[GH:.*]] = zero.host_alloc : memref<8xf32>
// CHECK: memref.copy %[[G]], %[[GH]]
// CHECK-NOT: zero.host_alloc
// CHECK: scf.for
// CHECK: vector.store %{{.*}}, %[[M]]
// CHECK-NOT: vector.store
// CHECK: } {zero.host}
// CHECK: %[[T:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: memref.copy %[[M]], %[[T]]
// CHECK: scf.parallel
// CHECK: %[[L:.*]] = vector.load %[[T]]
// CHECK: %[[L0:.*]] = vector.extract %[[L]][0]
// CHECK: %[[F0:.*]] = arith.mulf %[[L0]], %[[C]]
// CHECK: %[[L1:.*]] = vector.extract %[[L]][1]
// CHECK: %[[F1:.*]] = arith.mulf %[[L1]], %[[C]]
// CHECK: %[[F:.*]] = vector.from_elements %[[F0]], %[[F1]]
// CHECK: arith.subf %{{.*}}, %[[F]] : vector<2xf32>
// expected-remark @below {{zero-offload-to-host: @bias_corrected: 1 loop nest(s) on the host, 1 device buffer(s) copied, 1 computed by kernels from the new host state}}
func.func @bias_corrected(%m: memref<8xf32> {zero.memory = "host"},
                          %g: memref<8xf32>, %w: memref<8xf32>, %c: f32)
    -> memref<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %b = arith.constant 0.9 : f32
  %t = memref.alloc() : memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %k = arith.muli %i, %c2 : index
    %mv = vector.load %m[%k] : memref<8xf32>, vector<2xf32>
    %gv = vector.load %g[%k] : memref<8xf32>, vector<2xf32>
    %m0 = vector.extract %mv[0] : f32 from vector<2xf32>
    %m1 = vector.extract %mv[1] : f32 from vector<2xf32>
    %g0 = vector.extract %gv[0] : f32 from vector<2xf32>
    %g1 = vector.extract %gv[1] : f32 from vector<2xf32>
    %a0 = arith.mulf %m0, %b : f32
    %a1 = arith.mulf %m1, %b : f32
    %n0 = arith.addf %a0, %g0 : f32
    %n1 = arith.addf %a1, %g1 : f32
    %t0 = arith.mulf %n0, %c : f32
    %t1 = arith.mulf %n1, %c : f32
    %nv = vector.from_elements %n0, %n1 : vector<2xf32>
    %tv = vector.from_elements %t0, %t1 : vector<2xf32>
    vector.store %nv, %m[%k] : memref<8xf32>, vector<2xf32>
    vector.store %tv, %t[%k] : memref<8xf32>, vector<2xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %k = arith.muli %i, %c2 : index
    %tv = vector.load %t[%k] : memref<8xf32>, vector<2xf32>
    %wv = vector.load %w[%k] : memref<8xf32>, vector<2xf32>
    %d = arith.subf %wv, %tv : vector<2xf32>
    vector.store %d, %w[%k] : memref<8xf32>, vector<2xf32>
    scf.reduce
  }
  memref.dealloc %t : memref<8xf32>
  return %m : memref<8xf32>
}

// -----

// The denominator, f(v) = sqrt(v * c) + eps of the new second moment, a
// scalar a lane: the kernel computes all of f, its constant included, and
// the host's loop no longer does.
// CHECK-LABEL: func.func @denominator
// CHECK-SAME: (%[[V:.*]]: memref<4xf32> {zero.memory = "host"}, %{{.*}}: memref<4xf32>, %[[W:.*]]: memref<4xf32>, %[[C:.*]]: f32)
// CHECK: scf.for
// CHECK-NOT: math.sqrt
// CHECK: } {zero.host}
// CHECK: %[[T:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.copy %[[V]], %[[T]]
// CHECK: scf.parallel
// CHECK: %[[L:.*]] = memref.load %[[T]]
// CHECK: %[[S:.*]] = arith.mulf %[[L]], %[[C]] : f32
// CHECK: %[[R:.*]] = math.sqrt %[[S]] : f32
// CHECK: %[[E:.*]] = arith.constant 9.99999993E-9 : f32
// CHECK: %[[F:.*]] = arith.addf %[[R]], %[[E]] : f32
// CHECK: arith.divf %{{.*}}, %[[F]]
// expected-remark @below {{zero-offload-to-host: @denominator: 1 loop nest(s) on the host, 1 device buffer(s) copied, 1 computed by kernels from the new host state}}
func.func @denominator(%v: memref<4xf32> {zero.memory = "host"},
                       %g: memref<4xf32>, %w: memref<4xf32>, %c: f32)
    -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %t = memref.alloc() : memref<4xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %vi = memref.load %v[%i] : memref<4xf32>
    %gi = memref.load %g[%i] : memref<4xf32>
    %gg = arith.mulf %gi, %gi : f32
    %n = arith.addf %vi, %gg : f32
    %s = arith.mulf %n, %c : f32
    %r = math.sqrt %s : f32
    %eps = arith.constant 1.0e-8 : f32
    %d = arith.addf %r, %eps : f32
    memref.store %n, %v[%i] : memref<4xf32>
    memref.store %d, %t[%i] : memref<4xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %ti = memref.load %t[%i] : memref<4xf32>
    %wi = memref.load %w[%i] : memref<4xf32>
    %q = arith.divf %wi, %ti : f32
    memref.store %q, %w[%i] : memref<4xf32>
    scf.reduce
  }
  memref.dealloc %t : memref<4xf32>
  return %v : memref<4xf32>
}

// -----

// Not f of the new state: a temporary whose lanes are different functions
// of it, and one that reads the gradient too, are written on the host and
// copied up, as before (one through the gradient's host buffer, which each
// iteration reads before it writes), each into a temporary taken there.
// The kernel that reads them reads the weight too: it stays a kernel.
// CHECK-LABEL: func.func @not_of_the_state
// CHECK-NOT: memref.alloc
// CHECK-COUNT-2: zero.host_alloc
// CHECK-NOT: zero.host_alloc
// CHECK: } {zero.host}
// CHECK-DAG: %[[U:.*]] = memref.alloc() : memref<4xf32>
// CHECK-DAG: memref.copy %{{.*}}, %[[U]]
// CHECK-DAG: %[[T:.*]] = memref.alloc() : memref<4xf32>
// CHECK-DAG: memref.copy %{{.*}}, %[[T]]
// CHECK-NOT: memref.copy
// CHECK: scf.parallel
// CHECK: vector.load %[[T]]
// expected-remark @below {{zero-offload-to-host: @not_of_the_state: 1 loop nest(s) on the host, 3 device buffer(s) copied (1 back through the host buffer of one read)}}
func.func @not_of_the_state(%m: memref<4xf32> {zero.memory = "host"},
                            %g: memref<4xf32>, %w: memref<4xf32>, %c: f32)
    -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %b = arith.constant 0.9 : f32
  %t = memref.alloc() : memref<4xf32>
  %u = memref.alloc() : memref<4xf32>
  scf.parallel (%i) = (%c0) to (%c2) step (%c1) {
    %k = arith.muli %i, %c2 : index
    %mv = vector.load %m[%k] : memref<4xf32>, vector<2xf32>
    %gv = vector.load %g[%k] : memref<4xf32>, vector<2xf32>
    %m0 = vector.extract %mv[0] : f32 from vector<2xf32>
    %m1 = vector.extract %mv[1] : f32 from vector<2xf32>
    %g0 = vector.extract %gv[0] : f32 from vector<2xf32>
    %g1 = vector.extract %gv[1] : f32 from vector<2xf32>
    %n0 = arith.addf %m0, %g0 : f32
    %n1 = arith.addf %m1, %g1 : f32
    %t0 = arith.mulf %n0, %c : f32
    %t1 = arith.mulf %n1, %b : f32
    %u0 = arith.mulf %n0, %g0 : f32
    %u1 = arith.mulf %n1, %g1 : f32
    %nv = vector.from_elements %n0, %n1 : vector<2xf32>
    %tv = vector.from_elements %t0, %t1 : vector<2xf32>
    %uv = vector.from_elements %u0, %u1 : vector<2xf32>
    vector.store %nv, %m[%k] : memref<4xf32>, vector<2xf32>
    vector.store %tv, %t[%k] : memref<4xf32>, vector<2xf32>
    vector.store %uv, %u[%k] : memref<4xf32>, vector<2xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c2) step (%c1) {
    %k = arith.muli %i, %c2 : index
    %tv = vector.load %t[%k] : memref<4xf32>, vector<2xf32>
    %uv = vector.load %u[%k] : memref<4xf32>, vector<2xf32>
    %wv = vector.load %w[%k] : memref<4xf32>, vector<2xf32>
    %d = arith.subf %tv, %uv : vector<2xf32>
    %e = arith.subf %wv, %d : vector<2xf32>
    vector.store %e, %w[%k] : memref<4xf32>, vector<2xf32>
    scf.reduce
  }
  memref.dealloc %u : memref<4xf32>
  memref.dealloc %t : memref<4xf32>
  return %m : memref<4xf32>
}

// -----

// LAMB's norm of its update direction: the host's loop writes the squares
// of its new values into a temporary (and, in an iteration of its own, the
// sum's initial value), and the sum reads nothing else and writes only its
// temporary. The sum joins the host, so the squares stay in host memory;
// the sum's one element goes up to the kernel that copies it into the
// collective's buffer (a kernel: it writes a device buffer).
// CHECK-LABEL: func.func @host_sum
// CHECK-SAME: (%[[M:.*]]: memref<4xf32> {zero.memory = "host"}, %[[G:.*]]: memref<4xf32>, %[[OUT:.*]]: memref<1xf32>)
// CHECK: %[[SQ:.*]] = zero.host_alloc : memref<4xf32>
// CHECK: %[[ACCH:.*]] = zero.host_alloc : memref<1xf32>
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %[[SQ]]
// CHECK: memref.store %{{.*}}, %[[ACCH]]
// CHECK: } {zero.host}
// CHECK: scf.for
// CHECK: memref.load %[[SQ]]
// CHECK: memref.store %{{.*}}, %[[ACCH]]
// CHECK: } {zero.host}
// CHECK: %[[ACC:.*]] = memref.alloc() : memref<1xf32>
// CHECK-NEXT: memref.copy %[[ACCH]], %[[ACC]]
// CHECK: scf.parallel
// CHECK: memref.load %[[ACC]]
// CHECK: memref.store %{{.*}}, %[[OUT]]
// expected-remark @below {{zero-offload-to-host: @host_sum: 2 loop nest(s) on the host, 2 device buffer(s) copied}}
func.func @host_sum(%m: memref<4xf32> {zero.memory = "host"},
                    %g: memref<4xf32>, %out: memref<1xf32>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %zero = arith.constant 0.0 : f32
  %sq = memref.alloc() : memref<4xf32>
  %acc = memref.alloc() : memref<1xf32>
  scf.parallel (%i) = (%c0) to (%c5) step (%c1) {
    %update = arith.cmpi ult, %i, %c4 : index
    scf.if %update {
      %mi = memref.load %m[%i] : memref<4xf32>
      %gi = memref.load %g[%i] : memref<4xf32>
      %n = arith.addf %mi, %gi : f32
      %s = arith.mulf %n, %n : f32
      memref.store %n, %m[%i] : memref<4xf32>
      memref.store %s, %sq[%i] : memref<4xf32>
    } else {
      %j = arith.subi %i, %c4 : index
      memref.store %zero, %acc[%j] : memref<1xf32>
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    scf.for %j = %c0 to %c4 step %c1 {
      %x = memref.load %sq[%j] : memref<4xf32>
      %a = memref.load %acc[%i] : memref<1xf32>
      %y = arith.addf %x, %a : f32
      memref.store %y, %acc[%i] : memref<1xf32>
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    %a = memref.load %acc[%i] : memref<1xf32>
    memref.store %a, %out[%i] : memref<1xf32>
    scf.reduce
  }
  memref.dealloc %sq : memref<4xf32>
  memref.dealloc %acc : memref<1xf32>
  return %m : memref<4xf32>
}

// -----

// A buffer the nest only reads (the gradient's shard) and one it only
// writes (the weight's new value), each element read before it is written
// and every iteration on its own elements: one host buffer carries both,
// copied in from the first and back out to the second, which is allocated
// there: each device allocation moves down to its first use.
// CHECK-LABEL: func.func @shared_staging
// CHECK-SAME: (%[[M:.*]]: memref<4xf32> {zero.memory = "host"}, %[[G:.*]]: memref<4xf32>, %[[W:.*]]: memref<4xf32>)
// CHECK: %[[GH:.*]] = zero.host_alloc : memref<4xf32>
// CHECK: memref.copy %[[G]], %[[GH]]
// CHECK: %[[WH:.*]] = zero.host_alloc : memref<4xf32>
// CHECK: memref.copy %[[W]], %[[WH]]
// CHECK-NOT: zero.host_alloc
// CHECK: scf.for %[[I:.*]] =
// CHECK: memref.load %[[GH]][%[[I]]]
// CHECK: memref.store %{{.*}}, %[[GH]][%[[I]]]
// CHECK: } {zero.host}
// CHECK: %[[NEW:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.copy %[[GH]], %[[NEW]]
// CHECK: memref.dealloc %[[WH]]
// CHECK: memref.dealloc %[[GH]]
// CHECK-NOT: memref.dealloc
// CHECK: return %[[M]], %[[NEW]]
// expected-remark @below {{zero-offload-to-host: @shared_staging: 1 loop nest(s) on the host, 3 device buffer(s) copied (1 back through the host buffer of one read)}}
func.func @shared_staging(%m: memref<4xf32> {zero.memory = "host"},
                          %g: memref<4xf32>, %w: memref<4xf32>)
    -> (memref<4xf32>, memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %b = arith.constant 0.9 : f32
  %new = memref.alloc() : memref<4xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %mi = memref.load %m[%i] : memref<4xf32>
    %gi = memref.load %g[%i] : memref<4xf32>
    %wi = memref.load %w[%i] : memref<4xf32>
    %mb = arith.mulf %mi, %b : f32
    %m2 = arith.addf %mb, %gi : f32
    %w2 = arith.subf %wi, %m2 : f32
    memref.store %m2, %m[%i] : memref<4xf32>
    memref.store %w2, %new[%i] : memref<4xf32>
    scf.reduce
  }
  return %m, %new : memref<4xf32>, memref<4xf32>
}

// -----

// Where an iteration writes the new value before it reads the shard, or
// reads another iteration's element, the two keep host buffers of their own.
// CHECK-LABEL: func.func @own_staging
// CHECK-COUNT-2: zero.host_alloc
// CHECK-NOT: zero.host_alloc
// CHECK: } {zero.host}
// CHECK-LABEL: func.func @reversed
// CHECK-COUNT-2: zero.host_alloc
// CHECK-NOT: zero.host_alloc
// CHECK: } {zero.host}
// CHECK-LABEL: func.func @shifted
// CHECK-COUNT-2: zero.host_alloc
// CHECK-NOT: zero.host_alloc
// CHECK: } {zero.host}
// expected-remark @below {{zero-offload-to-host: @own_staging: 1 loop nest(s) on the host, 2 device buffer(s) copied}}
func.func @own_staging(%m: memref<4xf32> {zero.memory = "host"},
                       %w: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %new = memref.alloc() : memref<4xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %mi = memref.load %m[%i] : memref<4xf32>
    memref.store %mi, %new[%i] : memref<4xf32>
    %wi = memref.load %w[%i] : memref<4xf32>
    %m2 = arith.addf %wi, %mi : f32
    memref.store %m2, %m[%i] : memref<4xf32>
    scf.reduce
  }
  return %m, %new : memref<4xf32>, memref<4xf32>
}
// expected-remark @below {{zero-offload-to-host: @reversed: 1 loop nest(s) on the host, 2 device buffer(s) copied}}
func.func @reversed(%m: memref<4xf32> {zero.memory = "host"},
                    %w: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %new = memref.alloc() : memref<4xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %mi = memref.load %m[%i] : memref<4xf32>
    %j = arith.subi %c3, %i : index
    %wj = memref.load %w[%j] : memref<4xf32>
    %m2 = arith.addf %wj, %mi : f32
    memref.store %m2, %m[%i] : memref<4xf32>
    memref.store %m2, %new[%i] : memref<4xf32>
    scf.reduce
  }
  return %m, %new : memref<4xf32>, memref<4xf32>
}
// Iteration i reads the shard's element i - 1 and writes the new value's
// element i, which iteration i + 1 reads: one range of elements an
// iteration for both, or no shared buffer.
// expected-remark @below {{zero-offload-to-host: @shifted: 1 loop nest(s) on the host, 2 device buffer(s) copied}}
func.func @shifted(%m: memref<4xf32> {zero.memory = "host"},
                   %w: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %new = memref.alloc() : memref<4xf32>
  scf.parallel (%i) = (%c1) to (%c4) step (%c1) {
    %mi = memref.load %m[%i] : memref<4xf32>
    %j = arith.subi %i, %c1 : index
    %wj = memref.load %w[%j] : memref<4xf32>
    %m2 = arith.addf %wj, %mi : f32
    memref.store %m2, %m[%i] : memref<4xf32>
    memref.store %m2, %new[%i] : memref<4xf32>
    scf.reduce
  }
  return %m, %new : memref<4xf32>, memref<4xf32>
}

// -----

// A loop that carries state in host memory (zero-offload-state's
// zero.host_iter_args): the buffer it starts from and the one its body
// allocates for the next step become host allocations, so that its
// iter_arg and result are host memory too: the update's nest, which writes
// the next buffer, runs on the host, reading the gradient (a device buffer)
// through a host copy.
// CHECK-LABEL: func.func @carried
// CHECK: %[[START:.*]] = zero.host_alloc : memref<4xf32>
// CHECK: scf.for {{.*}} iter_args(%[[M:.*]] = %[[START]])
// CHECK: %[[NEXT:.*]] = zero.host_alloc : memref<4xf32>
// CHECK: %[[STAGED:.*]] = zero.host_alloc : memref<4xf32>
// CHECK: memref.copy %{{.*}}, %[[STAGED]]
// CHECK: scf.for
// CHECK: memref.load %[[M]]
// CHECK: memref.load %[[STAGED]]
// CHECK: memref.store %{{.*}}, %[[NEXT]]
// CHECK: } {zero.host}
// CHECK: scf.yield %[[NEXT]]
// CHECK: } {zero.host_iter_args = array<i64: 0>}
// expected-remark @below {{zero-offload-to-host: @carried: 1 loop nest(s) on the host, 1 device buffer(s) copied}}
func.func @carried(%m0: memref<4xf32> {zero.memory = "host"}, %g: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %half = arith.constant 0.5 : f32
  %start = memref.alloc() : memref<4xf32>
  memref.copy %m0, %start : memref<4xf32> to memref<4xf32>
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%m = %start) -> memref<4xf32> {
    %next = memref.alloc() : memref<4xf32>
    scf.parallel (%j) = (%c0) to (%c4) step (%c1) {
      %a = memref.load %m[%j] : memref<4xf32>
      %b = memref.load %g[%j] : memref<4xf32>
      %p = arith.mulf %a, %half : f32
      %s = arith.addf %p, %b : f32
      memref.store %s, %next[%j] : memref<4xf32>
      scf.reduce
    }
    scf.yield %next : memref<4xf32>
  } {zero.host_iter_args = array<i64: 0>}
  memref.copy %r, %m0 : memref<4xf32> to memref<4xf32>
  return
}

// -----

// A loop whose body yields a buffer that is no allocation of its own (the
// function's device argument): its iter_arg stays on the device, the mark
// removed, with a remark; the nest, which writes device memory only, stays
// a kernel.
// CHECK-LABEL: func.func @carried_view
// CHECK-NOT: zero.host_alloc
// CHECK: scf.parallel
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NOT: zero.host_iter_args
// expected-remark @below {{zero-offload-to-host: @carried_view: 0 loop nest(s) on the host, 0 device buffer(s) copied}}
func.func @carried_view(%m0: memref<4xf32> {zero.memory = "host"}, %d: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %start = memref.alloc() : memref<4xf32>
  memref.copy %m0, %start : memref<4xf32> to memref<4xf32>
  // expected-remark @below {{zero-offload-to-host: @carried_view: iter_arg 0 of the loop stays on the device: the buffer its body yields is not an allocation of static shape and layout, or the one it starts from cannot be copied to the host (a dynamic shape, or a loop that may not run)}}
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%m = %start) -> memref<4xf32> {
    scf.parallel (%j) = (%c0) to (%c4) step (%c1) {
      %a = memref.load %m[%j] : memref<4xf32>
      memref.store %a, %d[%j] : memref<4xf32>
      scf.reduce
    }
    scf.yield %d : memref<4xf32>
  } {zero.host_iter_args = array<i64: 0>}
  memref.copy %r, %m0 : memref<4xf32> to memref<4xf32>
  return
}

// -----

// A loop that starts from a view of part of an allocation (a rank's shard
// of the padded whole): the whole stays where it is, and a host buffer of
// the shard's shape takes a copy of it before the loop, which carries it
// from there, and is freed after the loop.
// CHECK-LABEL: func.func @carried_shard
// CHECK: %[[WHOLE:.*]] = memref.alloc() : memref<8xf32>
// CHECK: %[[SHARD:.*]] = memref.subview %[[WHOLE]][4] [4] [1]
// CHECK: %[[VIEW:.*]] = memref.cast %[[SHARD]]
// CHECK: %[[START:.*]] = zero.host_alloc : memref<4xf32>
// CHECK: memref.copy %[[VIEW]], %[[START]]
// CHECK: %[[CAST:.*]] = memref.cast %[[START]]
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[CAST]])
// CHECK: zero.host_alloc : memref<4xf32>
// CHECK: } {zero.host_iter_args = array<i64: 0>}
// CHECK-NEXT: memref.dealloc %[[START]]
// expected-remark @below {{zero-offload-to-host: @carried_shard: 1 loop nest(s) on the host}}
func.func @carried_shard(%m0: memref<8xf32> {zero.memory = "host"}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %half = arith.constant 0.5 : f32
  %whole = memref.alloc() : memref<8xf32>
  memref.copy %m0, %whole : memref<8xf32> to memref<8xf32>
  %shard = memref.subview %whole[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  %start = memref.cast %shard : memref<4xf32, strided<[1], offset: 4>> to memref<4xf32, strided<[?], offset: ?>>
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%m = %start) -> memref<4xf32, strided<[?], offset: ?>> {
    %next = memref.alloc() : memref<4xf32>
    scf.parallel (%j) = (%c0) to (%c4) step (%c1) {
      %a = memref.load %m[%j] : memref<4xf32, strided<[?], offset: ?>>
      %p = arith.mulf %a, %half : f32
      memref.store %p, %next[%j] : memref<4xf32>
      scf.reduce
    }
    %cast = memref.cast %next : memref<4xf32> to memref<4xf32, strided<[?], offset: ?>>
    scf.yield %cast : memref<4xf32, strided<[?], offset: ?>>
  } {zero.host_iter_args = array<i64: 0>}
  %out = memref.subview %m0[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  memref.copy %r, %out : memref<4xf32, strided<[?], offset: ?>> to memref<4xf32, strided<[1]>>
  memref.dealloc %whole : memref<8xf32>
  return
}
