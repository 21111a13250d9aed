//===- Passes.td - the GPU target's passes -*- tablegen -*-===//

#ifndef ZERO_TARGET_GPU_PASSES_TD
#define ZERO_TARGET_GPU_PASSES_TD

include "mlir/Pass/PassBase.td"
include "zero/Target/GPU/Options.td"
include "zero/Dialect/Zero/Transforms/PassOptions.td"

def ZeroGpuKernelNames : Pass<"zero-gpu-kernel-names", "mlir::ModuleOp"> {
  let summary = "Names outlined GPU kernels and their modules as PTX "
                "identifiers";
  let description = [{
    Runs in `zero-to-nvvm` right after `gpu-kernel-outlining`, which names
    each kernel (and its `gpu.module`) after the function it came from. An
    MLIR symbol may hold characters a PTX identifier may not (`@a.b`, a
    legal function name, gave `a.b_kernel`, which ptxas rejects). This pass
    renames every `gpu.module` and `gpu.func` to letters, digits, `_` and
    `$`, every other character becoming `_` (and `_` in front of a leading
    digit), with `_1`, `_2`, ... where two names would meet, and updates
    every `gpu.launch_func` that names them.

    ```mlir
    gpu.module @a.b_kernel { gpu.func @a.b_kernel(...) kernel { ... } }
    gpu.launch_func @a.b_kernel::@a.b_kernel ...
    // becomes
    gpu.module @a_b_kernel { gpu.func @a_b_kernel(...) kernel { ... } }
    gpu.launch_func @a_b_kernel::@a_b_kernel ...
    ```
  }];
}

def ZeroGpuCopies : Pass<"zero-gpu-copies"> {
  let summary = "Turns copies between buffers into loop nests, for kernels";
  let description = [{
    Runs in `zero-to-nvvm` after bufferization, before loop nests become
    kernels. A `memref.copy` between buffers (the packing of a bucket, a
    pad, a copy bufferization made) would run on the host, over managed
    memory that the kernels before and after it use: every such copy moves
    pages between host and device and makes the host wait for the kernels.
    As a `linalg.copy` it becomes a kernel of its own. A copy whose source is
    a `memref.get_global` (a constant, which lives in the host program) stays
    on the host. So does a copy of one contiguous range from a device
    buffer down into host memory (`zero.memory = "host"`,
    `zero.host_alloc`), such as an offloaded weight's new value, gathered on
    the device, into its host argument: `zero-offload-to-host` puts it on
    the rank's host queue, in order with the queue's reads of what it
    overwrites, and `zero-gpu-buffer-placement` makes it the runtime's copy
    across the link. As a kernel it would write host memory, and
    `zero-offload-to-host` would run it on the host from a pinned copy of
    the whole device buffer. (A kernel that only reads host memory reads it
    across the link.)

    ```mlir
    memref.copy %a, %view : memref<23xf32> to memref<23xf32, strided<[1], offset: 64>>
    // becomes
    linalg.copy ins(%a : memref<23xf32>) outs(%view : memref<23xf32, strided<[1], offset: 64>>)
    ```
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def ZeroGpuParallelFirst : Pass<"zero-gpu-parallel-first"> {
  let summary = "Puts each loop nest's parallel loops outside its reductions";
  let description = [{
    Runs in `zero-to-nvvm` (and `zero-to-llvm{gpu-loops}`) after
    bufferization, before linalg ops become parallel loops. A loop nest
    becomes a kernel from its outer parallel loops; a reduction loop outside
    them stays on the host. So a partial reduction over its first dimension
    (a bias's or a norm's gradient, summed over a batch's rows) would launch
    one kernel per row, B launches a step where one does. This pass moves
    every parallel dimension of a linalg op before its reduction
    dimensions, keeping each kind's order (named ops such as `linalg.reduce`
    go through their generic form): each thread of the kernel then sums its
    own column over the rows.

    Each result element is still summed over the same elements in the same
    order, so results do not change. An op it cannot rewrite stays as it
    is, with a remark.

    ```mlir
    linalg.reduce ins(%x : memref<512x768xf32>) outs(%db : memref<768xf32>)
        dimensions = [0]
    // becomes
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>,
                                     affine_map<(d0, d1) -> (d0)>],
                    iterator_types = ["parallel", "reduction"]}
        ins(%x : memref<512x768xf32>) outs(%db : memref<768xf32>)
    ```
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def ZeroGpuCollapseLoops : Pass<"zero-gpu-collapse-loops"> {
  let summary = "Collapses each multi-dimensional parallel loop nest into one "
                "dimension";
  let description = [{
    Runs in `zero-to-nvvm` (and `zero-to-llvm{gpu-loops}`) after independent
    loops are merged, before loop nests are tiled into kernels. Tiling makes
    a nest's first dimension blocks of threads, and each further dimension a
    grid dimension of its own; CUDA allows at most 65535 blocks in y and z,
    so a nest like 1 x 6291456 (a gathered weight's padding) could not be
    launched, and its blocks would run one busy thread of 256. Collapsed
    into one dimension (XLA does the same), a nest of any shape fits, every
    thread has work, and consecutive threads take consecutive elements of
    the last dimension, so their accesses coalesce. Each iteration
    recovers its indices by division and remainder, so it runs the same
    operations on the same elements as before: results do not change.

    Only a nest that becomes a kernel of its own is collapsed: an outermost
    `scf.parallel` with more than one dimension, not yet mapped to the GPU
    and without reduction results.

    ```mlir
    scf.parallel (%i, %j) = (%c0, %c0) to (%c7, %c13) step (%c1, %c1) {
      %x = memref.load %a[%i, %j] : memref<7x13xf32>
      ...
    }
    // becomes
    scf.parallel (%k) = (%c0) to (%c91) step (%c1) {
      %j = arith.remsi %k, %c13 : index
      %i = arith.divsi %k, %c13 : index
      %x = memref.load %a[%i, %j] : memref<7x13xf32>
      ...
    }
    ```
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::affine::AffineDialect"
  ];
}

def ZeroGpuIeeeSqrt : Pass<"zero-gpu-ieee-sqrt", "mlir::gpu::GPUModuleOp"> {
  let summary = "Makes kernels' square roots correctly rounded";
  let description = [{
    Runs in `zero-to-nvvm` on the kernels' modules, before
    `convert-gpu-to-nvvm`. That conversion lowers `math.sqrt` to libdevice's
    `__nv_sqrtf`, whose precision `__nvvm_reflect("__CUDA_PREC_SQRT")`
    decides; nothing sets it, so the kernel would use `sqrt.approx.f32`,
    which differs from the CPU's square root in the last bit (on the H100,
    adagrad and LAMB were 1 and 2 ulp from the CPU for that reason alone).
    libdevice's `__nv_fsqrt_rn` (and `__nv_dsqrt_rn` for f64) is
    `sqrt.rn.f32`: rounded as IEEE 754 asks, bit for bit the CPU's. It costs a
    few instructions an element, which a memory-bound update does not notice.

    A `math.sqrt` whose fastmath flags allow an approximation (`afn`), or of
    a type other than f32 and f64, is left as it is.

    ```mlir
    %r = math.sqrt %v : f32
    // becomes
    llvm.func @__nv_fsqrt_rn(f32) -> f32
    %r = llvm.call @__nv_fsqrt_rn(%v) : (f32) -> f32
    ```
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def ZeroGpuBufferPlacement : Pass<"zero-gpu-buffer-placement",
                                  "mlir::ModuleOp"> {
  let summary = "Decides whether a GPU program's buffers can live in device "
                "memory";
  let description = [{
    Runs in `zero-to-nvvm` after kernel outlining, on the host code in
    memrefs. Device memory is faster than managed memory, but only kernels
    reach it. When no host op reads or writes a buffer's elements, every
    buffer can live there: the pass sets `zero.gpu_memory = "device"` on the
    module. Otherwise it sets `"managed"`, and `zero.gpu_memory_reason`
    names the first host op that touches elements and where it is:

    - `memref.load`, `memref.store`, `memref.copy` and any op that reads or
      writes memory other than allocation and freeing;
    - a collective's buffer form, when `gpu-collectives=host` (the local and mpi
      backends move and reduce elements on host threads); with
      `gpu-collectives=device` (the default: the cuda-local and nccl backends
      run collectives on the GPU) a collective does not touch elements on
      the host;
    - a call that takes a buffer.

    Views, shapes, allocation and kernel launches do not touch elements.
    With `gpu-collectives=device`, the host's reads and writes of one element
    of a GPU buffer at a fixed place (constant indices, or the step of a
    loop that launches kernels: a norm the host turns into a factor, a
    loss recorded each step) become copies through a stack slot, calls of
    the runtime's `zero_rt_gpu_read` and `zero_rt_gpu_write`, so they keep
    nothing out of device memory; so does a copy of a constant into a
    buffer (a reduction's initial value), which becomes a
    `zero_rt_gpu_write` of the constant's bytes.
    The copies between host memory and a device buffer that
    `zero-offload-to-host` made become the runtime's copies across the link
    (`zero_rt_gpu_read`, `zero_rt_gpu_upload`; for the rank's host queue,
    `zero.queued`, `zero_rt_gpu_queue_copy`; a copy down that the rank only
    starts, `zero.copy_down`, `zero_rt_gpu_copy_down` on its copy
    stream), and its queued frees of
    device buffers the runtime's frees after those copies: the rank's at
    once (`zero_rt_gpu_free_after_copies`) where only an update's copies
    in or its copies down, which the rank starts, read the buffer, the
    queue's (`zero_rt_gpu_queue_free`) where a copy of the queue's own
    thread does.
    Buffer deallocation's bookkeeping (small buffers, at most 4 KiB, that
    only the host reads and writes, and passes only to private functions of
    the module that only read and write them) moves to the host's stack, at
    its function's entry, so that it keeps nothing out of device memory;
    ops on stack buffers, and functions only ever given stack buffers, do
    not count.
    `zero-gpu-host-memory` allocates accordingly, and `zero-compile` writes
    the choice into the artifact's description (`"memory"`), where
    `zero-launch` reads it to copy arguments in and results out. The module
    also gets `zero.gpu_collectives` (the option's value), which the
    description records as `"collectives"`: an artifact whose collectives
    run on the device needs a GPU backend.

    ```mlir
    // device: the host only allocates and launches
    %w2 = memref.alloc() : memref<1024xf32>
    gpu.launch_func @step_kernel::@step_kernel ... args(%w : memref<1024xf32>, %w2 : memref<1024xf32>)
    // managed (reason: "'memref.load' at prog.mlir:12:8 reads a buffer on the host")
    %v = memref.load %norm[] : memref<f32>
    ```
  }];
  let options = [gpuCollectivesOption];
  let dependentDialects = ["mlir::LLVM::LLVMDialect", "mlir::func::FuncDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect"];
}

def ZeroOffloadToHost : Pass<"zero-offload-to-host", "mlir::ModuleOp"> {
  let summary = "Runs the loops on offloaded state on the host, with the "
                "device buffers they read and write copied across";
  let description = [{
    Runs in `zero-to-nvvm` (and in `zero-to-llvm{gpu-loops}`, the GPU's CPU
    replica) after the loop nests take the GPU's structure and before they
    become kernels. It realizes the marks of `zero-offload-state`: each
    argument with `zero.memory = "host"` lives in pinned host memory, and
    the host runs every loop nest that writes one (the update of that
    state); a nest that only reads one (a copy of the new state into a
    gather's bucket) stays a kernel and reads the mapped pinned memory
    across the link. So does, until no more join, a nest that writes a
    temporary only host loops read, and a nest that uses nothing but
    temporaries, reading what host loops write (LAMB's sum of its update
    direction's squares, which the host's loop makes: they stay in host
    memory rather than go up for a kernel to add up); a nest that writes a
    device buffer other than a temporary (a copy into a collective's
    bucket) stays a kernel:

    - what a loop carries in host memory (`zero.host_iter_args`) lives
      there: the buffer its body yields for the next step (an allocation
      each step, as bufferization makes it) becomes a `zero.host_alloc`,
      and so does the one it starts from where the iter_arg is all of it;
      where that is a view of part of an allocation (a rank's shard of the
      padded whole) or a device argument, a host buffer of the iter_arg's
      shape takes a copy of it before a loop of at least one step and is
      freed after it. The iter_arg and the loop's result are then host
      memory, and the nests that write them run on the host within each
      step. An iter_arg whose buffers cannot be placed so stays on the
      device, its mark removed, with a remark;
    - each such top-level `scf.parallel` becomes a nest of `scf.for` (so it
      never becomes a kernel), marked `zero.host`;
    - a temporary that only host loops use is allocated in host memory
      (`zero.host_alloc`); one that several host loops write in turn and
      kernels then only read (a sum's accumulator, which the host's update
      starts and its sum finishes) has one host buffer in all of those
      loops, copied up once after the last;
    - each other buffer such a loop reads or writes (the reduce-scatter's
      gradient shard, a weight on the device, the forward pass's copy) is
      copied to a host buffer before the loop (when it reads it) and back
      after it (when it writes it): `memref.copy`, which the GPU lowering
      makes stream-ordered copies (`zero-gpu-buffer-placement`); a view
      that is not one contiguous range (a member's rows in a bucket) goes
      through a contiguous device buffer that a kernel gathers it into, or
      scatters it from;
    - a contiguous buffer the loop only writes (the new weight) goes back
      through the host buffer of a contiguous one of its shape that it only
      reads (the gradient's shard), where iteration i of the one-level nest
      touches both only at elements [(i - c) * s, (i - c + 1) * s) (c and
      s constants), in one block, every load before every store: no
      element is written before it is read, in any order of the
      iterations, and chunk by chunk. One host buffer less an update, and
      no write-allocate read of a second one;
    - a device temporary that the loop only writes, as f(u) of a value u
      it stores in host memory at the same index (AdamW's bias-corrected
      moments and denominator, read by the weight's kernel, are f of the
      new moments; for vectors, each lane the same f of the same lane),
      where f is float arithmetic (add, sub, mul, div, neg, sqrt,
      constants) on u and on values the readers see, and every reader is a
      load in a kernel: the loop no longer stores f(u); the copy after it
      brings u up from host memory into the temporary instead, and each
      load is followed by f. The loop stores less, the temporary needs no
      host buffer, and f rounds alike on both sides (below);
    - a device temporary that only kernels read once a host loop has
      written it (LAMB's update direction, which the weight's kernel reads
      once the gather of its norms is done; AdamW's bias-corrected moments
      under clipping, which wait for the clipping factor) is copied up on
      the rank's stream rather than with the host's work on the queue, and
      its allocation moves down to just before that copy: the copy follows
      the rank's wait for the host loop, which its kernel follows anyway,
      and the device holds one such temporary at a time, not every one the
      host has made since the backward pass began;
    - each host loop runs across the host's cores (`parallel`, the
      default), its outermost loop split (what its body nests, such as
      the sequential loop of a norm's partial sums, runs within an
      iteration): its body becomes a task
      `@<function>_host<i>(context, begin, end)`, marked
      `zero.host_task`, over a range of its iterations, and the loop a call
      of `zero_rt_parallel_for`, which gives each rank its share of the
      cores; the values the body uses from outside go through the context,
      a 64-bit slot each (a buffer as its address, with its offset and
      strides where those are dynamic), and constants are
      copied into the task. Iterations are independent (the nest was
      parallel), so the split changes no result;
    - with `overlap` (the default, which needs `parallel` and every host
      loop a task: each value its body uses from outside a number or a
      buffer of static shape, else a remark at the value says
      the host's work stays in order on the rank's thread), the host's
      work goes to the rank's host queue
      (`zero_rt_host_queue_*`), a thread that runs it in order while the
      rank's thread goes on launching the step: the copies across the link
      (marked `zero.queued`; on the GPU `zero_rt_gpu_queue_copy`, on the
      queue thread's own stream), the program's own copies down into host
      memory among them (a gathered weight into its host argument, which
      `zero-gpu-copies` leaves a copy), and the host loops
      (`zero_rt_host_queue_for`); a loop of a constant number of
      iterations whose copies out write nothing another of its copies
      touches goes with its copies as one `zero_rt_host_queue_update`,
      which the queue can pipeline in chunks of its iterations: a copy
      whose staging buffer splits by them (iteration i has elements
      [i * k, (i + 1) * k)) chunk by chunk, any other (a scalar such as a
      clipping factor, a fused bucket's buffer) whole, before the first
      chunk or after the last; as many chunks as the queue's cost model
      (`HostQueueModel`, CostModel.h, as `zero-offload-state`'s
      `offload-device-share=auto` plays it) says make it shortest, the
      fewest among equals: n chunks take the first chunk's copies in (over
      `link-gbps`), loop (its loads and stores, scalar or vector, over
      `host-gbps`, and `chunk-overhead-us`: a wake of the host's threads
      and an event's wait, 180 by default, from the H200's measurement,
      where 2 MiB chunks cost that much each) and copies out, then about
      the slowest of the three for each other chunk; the call gets the
      chunk's bytes of copies, 0 for one chunk. Each moves up to just after what it
      depends on (a buffer it touches where either writes, a value it
      uses, an op of unknown effect, the previous queued op), so that a
      bucket's update starts once its reduce-scatter is done while the
      backward pass goes on over the next; each run of them starts with a
      fence (`zero_rt_host_queue_fence`: the queue waits for the rank's
      stream so far). The rank waits for its queue
      (`zero_rt_host_queue_join`) once, before the block's terminator or
      an op of unknown effect; every op that depends on the queue's work
      (the weight's update from the moments the host made) moves there,
      each after a wait for the queue's work up to the last queued op it
      depends on (`zero_rt_host_queue_mark` just after that op gives a
      ticket, `zero_rt_host_queue_wait` takes it), those that need less
      first where they do not depend on the others, so that the gather of
      the first bucket's new weights goes on while the host updates the
      next; so do the frees of the buffers the queue
      uses, but for the device buffers that the queue only copies down
      (with `queue-frees`, the default): those only the queued updates'
      copies in read (the gradient shards), and those a queued copy reads
      (a delayed update's gradient shard into its host argument, a weight
      gathered on the device into its host argument). Each is freed just
      after the last op that touches it, once copied down, so that the
      step does not hold them all until the wait. On a GPU the rank starts
      an update's copies in when it queues the update, on a copy stream of
      its own, and frees a buffer only those read there
      (`zero_rt_gpu_free_after_copies`: its stream waits for the copies
      when it takes the buffer again); the queue's thread makes a queued
      copy, so the queue frees a buffer one reads after it
      (`zero_rt_gpu_queue_free`, which `zero-gpu-buffer-placement`
      chooses); on the CPU replica the queue frees all of them
      (`zero_rt_host_queue_free`). A copy down into host memory that
      must follow the wait (a weight gathered on the device from the
      queue's update into its host argument, under `offload=params`, the
      update delayed or not) is the rank's, but where no op after it before the
      next wait for the whole queue touches its target or writes its
      source (but that source's free) it is marked `zero.copy_down`: on a
      GPU the rank only starts it on its copy stream
      (`zero_rt_gpu_copy_down`) and goes on to the next gather, rather
      than synchronize with its stream for each weight; the queue's later
      work and the rank's next `zero_rt_host_queue_join`, which follows,
      wait for it, and its source's free stays marked, the rank's at once
      with its reuse ordered after the copy; the CPU replica copies at
      once. The remark counts them. The copies of a delayed update's
      results go to the queue in the order their sources are made, not the
      results' order, since the queue keeps its work in order. A buffer
      that an op after the wait
      touches, or that asks for more alignment than the runtime's
      allocators give (64 bytes: the free takes the aligned pointer as
      the allocated one), is freed after the wait. With `queue-frees`
      too, a host staging buffer that only queued ops use (an update's
      gradient shard copied down, its new weight copied up) is freed by the
      queue once they are done (`memref.dealloc {zero.queued,
      zero.staging}`, `zero_rt_host_queue_free_staging`) and allocated
      within the rank's staging budget (`zero.host_alloc staging`,
      `zero_rt_host_alloc_staging`: the rank waits for the queue's frees
      rather than hold more than `ZERO_STAGING_BYTES`, 256 MiB by
      default), so that its pinned memory does not grow with the number of
      updates in a step; the remark counts them. A staging buffer that a
      queued update only writes and copies out (the new weight shard where
      the host holds the state it comes from: `offload=params`, a delayed
      update) is not the rank's at all: the queue takes it from the rank's
      staging as it runs the update and gives it back once the copy out is
      done (`zero_rt_host_queue_update`'s staged triples: bytes, the
      context slot, the copy; the rank writes 0 where its address goes),
      so the rank holds none for the updates it has queued and the queue
      not yet run (a delayed step queues them all at its start); the
      remark counts them among those the queue frees. A buffer copied in
      too stays the rank's: a GPU starts those copies when the rank queues
      the update. Where such an update must
      follow the rank's wait after all (it reads what the rank computes
      after the wait), it is the rank's, and so are its host buffers: plain
      host allocations, which the rank frees (only the queue gives staging
      back). Buffers
      alias only as views of one allocation or argument; a buffer a loop
      carries or a call returns counts as unknown. Where a host loop cannot
      be a task, the host's work stays in order on the rank's thread, with
      a remark;
    - a collective whose input or output is in host memory (a weight's
      shard gathered for the forward pass under `offload=params`) goes
      through device buffers: the input copied up before it, the output
      copied back once it completes (at its `zero.wait` when started), so
      that every backend, NCCL's included, moves device buffers; this
      comes before the queue's schedule, which so sees those copies (a new
      weight's shard, updated in its host argument, goes up and is gathered
      after the rank's wait for its update, and its copy back is one the
      rank only starts, as above);
    - a result that is the next value of a host argument (`zero.state_of`)
      but not yet in host memory (a delayed update's gradient shard, the
      output of a reduce-scatter on the device, and its flag; see
      `zero-delay-update`) is put there, since the launcher hands it back
      as that argument, which the host reads: a fresh buffer that only
      copies write is allocated in host memory; any other is copied into
      its argument, which is donated to it (`zero.aliasing_output`), where
      that argument has its type and is neither donated to nor returned as
      another result (else into a host buffer of its own), and its device
      buffer freed, the copy on the rank's host queue with `overlap` (made
      as soon as what writes the buffer is done and the queue's reads of
      the argument's old value, the delayed update's host loops, are
      queued, while the rank goes on), else before the return, where the
      rank waits for its stream; so those results take no pinned memory of
      their own each step. A result that is not a static buffer without a layout
      keeps the function on the device, with a remark;
    - the function's results that are host buffers (state updated in place,
      the results above) are noted too: the module gets `zero.host_memory = {<function> =
      {arguments = [...], results = [...]}}`, which `zero-compile` writes
      into the artifact's description (`"memory": "host"` on each value)
      for the launcher.

    The host runs the same loop bodies the device would, in the same
    order of elements within each, and the CPU lowering neither contracts
    a multiply and an add (no `contract` flags) nor approximates square
    roots or divisions, which `zero-gpu-ieee-sqrt` and the NVVM lowering
    also hold to on the device: the offloaded program gives the same bits.

    A loop nest on offloaded state that it cannot run on the host (one that
    reduces into results) leaves the whole function on the device, with a
    remark that names it, and the marks are dropped. With `gpu=false` (a
    CPU artifact, `zero-to-llvm` without `gpu-loops`) a marked argument is
    an error: offload needs a device to offload from.

    ```mlir
    // before: a kernel-to-be on an offloaded moment %m
    scf.parallel (%i) = (%c0) to (%c23) step (%c1) {
      %g = memref.load %grad[%i] : memref<23xf32, strided<[1], offset: 4>>
      ...
      memref.store %m2, %m[%i] : memref<23xf32>
    }
    // after
    %g_host = zero.host_alloc : memref<23xf32>
    memref.copy %grad, %g_host : memref<23xf32, strided<[1], offset: 4>> to memref<23xf32>
    scf.for %i = %c0 to %c23 step %c1 {
      %g = memref.load %g_host[%i] : memref<23xf32>
      ...
    } {zero.host}
    memref.dealloc %g_host : memref<23xf32>
    ```
  }];
  let options = !listconcat([
    Option<"gpu", "gpu", "bool", /*default=*/"true",
           "The program runs beside a GPU (zero-to-nvvm, or its CPU "
           "replica); false: a CPU artifact, where offloaded state is an "
           "error">,
    Option<"parallel", "parallel", "bool", /*default=*/"true",
           "Run each host loop across the host's cores (a task called by "
           "zero_rt_parallel_for); false: on the rank's thread">,
    Option<"overlap", "overlap", "bool", /*default=*/"true",
           "Run the host's loops and copies on the rank's host queue, "
           "beside its stream, each as early as its inputs allow, and wait "
           "for them as late as their users allow (needs parallel); false: "
           "in order on the rank's thread">,
  ], offloadQueueOptions);
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect", "zero::ZeroDialect"];
}

def ZeroGemmCalls : Pass<"zero-gemm-calls", "mlir::ModuleOp"> {
  let summary = "Turns matmuls on row-major buffers into calls of a GEMM "
                "through the runtime: cuBLAS's, or its CPU replica";
  let description = [{
    Runs in `zero-to-nvvm` after bufferization, before loop nests become
    kernels (as XLA calls cuBLAS for its dots), and in `zero-to-llvm`. A `linalg.matmul`, C[m, n]
    += op(A)[m, k] op(B)[k, n], becomes a call of the runtime's

    ```c
    void zero_rt_gpu_matmul(int32_t input_dtype, int32_t output_dtype,
                            int64_t m, int64_t n, int64_t k,
                            const void *a, int64_t lda, int32_t transpose_a,
                            const void *b, int64_t ldb, int32_t transpose_b,
                            void *c, int64_t ldc);
    ```

    when its operands are 2-D buffers, each input row-major or column-major
    (any leading dimension) and C row-major, and its indexing maps read A
    as (m, k) or transposed as (k, m), B as (k, n) or as (n, k), and C as
    (m, n): the default maps, and the transpose-A and transpose-B forms
    that `zero-normalize-matmuls` leaves a linear layer's forward and its
    weight's gradient in. A matmul's generic form on buffers (a pipeline
    that runs this pass alone may have one) is taken as the
    `linalg.matmul` it is first (`zero::matmulMapsOf`). An input whose map transposes it,
    or whose buffer is column-major (but not both), is passed as stored
    with its transpose flag, so no transposed copy is made; cuBLAS reads it
    so (`CUBLAS_OP_T`). The call runs `cublasGemmEx` (beta = 1: it
    accumulates into C, as the op does) on the calling rank's stream, after
    the kernels before it and before those after it. Element types: f32,
    f64, and bf16 or f16 inputs with an output of the same type or f32
    (accumulated in f32). A matmul the pass cannot call cuBLAS for (a
    broadcast operand, an operand neither row- nor column-major, a
    column-major C) stays a loop nest (a kernel) and gets a remark saying
    why. An operand whose inner stride is known only at run time (a weight
    that a training loop carries has a dynamic layout) is checked there:
    the call runs when its rows are contiguous and the loop nest when not.
    cuBLAS sums in its own order, so results differ from the loop nest's in
    the last bits; they do not change between runs or between the
    replicated and the sharded program.

    ```mlir
    linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x16xf32>)
                  outs(%c : memref<8x16xf32>)
    // becomes
    func.call @zero_rt_gpu_matmul(%c0_i32, %c0_i32, %c8, %c16, %c4, %pa, %c4,
        %c0_i32, %pb, %c16, %c0_i32, %pc, %c16) : (i32, i32, i64, i64, i64,
        !llvm.ptr, i64, i32, !llvm.ptr, i64, i32, !llvm.ptr, i64) -> ()
    ```

    With `gemm=host`, the calls are of `zero_rt_host_matmul` (the same
    arguments and `accumulate`): the runtime's GEMM on the CPU, in a GPU
    GEMM's order of operations (each dot product accumulated from zero with
    fused multiply-adds, then added to C; vectorized across C's columns and
    split across the rank's share of the host's threads). Where a
    `linalg.fill` of +0.0 makes C just before the matmul, with nothing
    between that touches C's buffer (a weight's gradient), the fill goes
    and `accumulate` is 0: the GEMM adds its sums to zero without reading C,
    the bits the zeros give, and C is written once rather than filled, read
    and written again. (cuBLAS keeps the fill and beta = 1: its beta = 0
    would not add the zero, and a sum of -0 would keep its sign.) `zero-to-llvm` runs the
    pass so for the CPU's matmuls (as XLA's CPU backend calls a library for
    its dots), and so does `zero-to-llvm{gpu-loops}`, the GPU's structure
    run on the CPU: a matmul the pass leaves as a loop nest in one program
    and calls in another shows as a difference on the CPU too.
  }];
  let options = [
    Option<"gemm", "gemm", "::zero::GemmLibrary",
           /*default=*/"::zero::GemmLibrary::Cublas", "Whose GEMM is called",
           [{::llvm::cl::values(
             clEnumValN(::zero::GemmLibrary::Cublas, "cublas",
                        "cuBLAS on the rank's stream (zero_rt_gpu_matmul)"),
             clEnumValN(::zero::GemmLibrary::Host, "host",
                        "the runtime's CPU replica of it "
                        "(zero_rt_host_matmul), for the GPU's structure run "
                        "on the CPU"))}]>,
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect", "mlir::func::FuncDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect"];
}

def ZeroGpuWideAccess : Pass<"zero-gpu-wide-access"> {
  let summary = "Gives 1-D elementwise loops 16-byte loads and stores";
  let description = [{
    Runs in `zero-to-nvvm` on parallel loops, before independent loops are
    merged and loops become kernels. A GPU thread moves memory fastest 16
    bytes at a time. A 1-D `scf.parallel` from 0 by 1 to a static N whose
    body reads and writes buffers only at its own index (element i of every
    buffer in, element i of every buffer out: an optimizer's update, a
    bf16 copy) becomes a loop over N / V groups of V = 16 / (widest element
    in bytes) elements: each buffer's V elements are read with one
    `vector.load` (16 bytes for the widest type), the scalar body runs once
    per lane on `vector.extract`s, and each stored buffer gets one
    `vector.store` of the lanes' values (`vector.from_elements`). Each
    element sees the same operations as before, so results do not change.

    Whether the buffers start on 16-byte boundaries is known only at run
    time (a shard is a view at the rank's offset), so the host checks, and
    runs the wide loop when all do and the loop as it was otherwise.

    Loops stay as they are when N is not a multiple of V, when the body has
    control flow or other memory effects, when a buffer is stored twice or
    read after it is stored, or when an access is not at the loop's own
    index.

    ```mlir
    scf.parallel (%i) = (%c0) to (%c1024) step (%c1) {
      %g = memref.load %grad[%i] : memref<1024xf32>
      ...
      memref.store %w2, %out[%i] : memref<1024xf32>
    }
    // becomes, where every buffer is 16-byte aligned
    scf.parallel (%j) = (%c0) to (%c256) step (%c1) {
      %i = arith.muli %j, %c4 : index
      %g4 = vector.load %grad[%i] {alignment = 16 : i64} : memref<1024xf32>, vector<4xf32>
      // the body four times, on vector.extract %g4[0] ... [3]
      %w4 = vector.from_elements %a, %b, %c, %d : vector<4xf32>
      vector.store %w4, %out[%i] {alignment = 16 : i64} : memref<1024xf32>, vector<4xf32>
    }
    ```
  }];
  let dependentDialects = ["mlir::vector::VectorDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect"];
}

def ZeroGpuDeferHostWaits : Pass<"zero-gpu-defer-host-waits",
                                 "mlir::ModuleOp"> {
  let summary = "Makes the host wait for the GPU only before it touches "
                "a buffer's elements";
  let description = [{
    Runs in `zero-to-nvvm` right after `gpu-async-region`, which makes the
    host wait for the kernels in flight (a blocking `gpu.wait`) before every
    op it cannot see into: every call, every collective. Most of those only
    enqueue more work on the rank's stream, and a wait before each keeps the
    GPU idle while the host launches what follows: a training step would
    wait once per matmul and per collective.

    zero's runtime runs all of a rank's GPU work on one stream (each
    `mgpuStreamCreate` returns the calling thread's), so work enqueued after
    a kernel runs after it without the host waiting. A blocking `gpu.wait`
    therefore moves past the ops that need nothing from the host's side:

    - ops without memory effects, and ops on buffers on the host's stack;
    - allocation and freeing (the runtime's pools are per rank, and a buffer
      a rank frees goes to its later work, on the same stream);
    - calls of the runtime's stream-ordered entry points:
      `zero_rt_gpu_matmul` (cuBLAS on the rank's stream),
      `zero_rt_gpu_write` (a copy on the stream, staged before it returns)
      and `zero_rt_gpu_read` (a copy on the stream that the host waits
      for itself);
    - a collective's buffer form and the wait that completes a started one,
      when the module's collectives run on the device
      (`zero.gpu_collectives = "device"`, from `zero-gpu-buffer-placement`):
      the cuda-local and nccl backends order them against the rank's stream
      with CUDA events.

    If the next op after those enqueues GPU work (a launch, or a new chain's
    `gpu.wait async`) or is another blocking wait, the wait goes: a later
    wait on the same stream covers the work it waited for. Otherwise it
    moves to just before that op: an op that touches a buffer on the host,
    any other call, an op with regions, or the end of its block.

    ```mlir
    %1 = gpu.launch_func async [%0] @k::@k ...
    gpu.wait [%1]
    func.call @zero_rt_gpu_matmul(...)
    %2 = gpu.wait async
    %3 = gpu.launch_func async [%2] @k2::@k2 ...
    gpu.wait [%3]
    %v = memref.load %managed[] : memref<f32>
    // becomes: the matmul queues behind the kernel; the host waits for the
    // second kernel only before it reads
    %1 = gpu.launch_func async [%0] @k::@k ...
    func.call @zero_rt_gpu_matmul(...)
    %2 = gpu.wait async
    %3 = gpu.launch_func async [%2] @k2::@k2 ...
    gpu.wait [%3]
    %v = memref.load %managed[] : memref<f32>
    ```
  }];
}

def ZeroGpuHostMemory : Pass<"zero-gpu-host-memory", "mlir::ModuleOp"> {
  let summary = "Places the host's buffers in GPU-visible (managed) memory";
  let description = [{
    Runs last in `zero-to-nvvm`, on the host code in the LLVM dialect. Calls
    to `malloc` and `free` (what `gpu-to-llvm` makes of `memref.alloc` and
    `memref.dealloc`), or to MLIR's generic `_mlir_memref_to_llvm_alloc` and
    `_mlir_memref_to_llvm_free` (what the host pipeline's
    `finalize-memref-to-llvm{use-generic-functions}` makes of them), become
    calls to the runtime's
    `zero_rt_gpu_alloc` and `zero_rt_gpu_free`, which allocate CUDA managed
    memory: the kernels read and write every buffer, and the host code that
    remains (scalar loads, copies between layouts, the collectives of the
    CPU backends) reaches the same buffers. When
    `zero-gpu-buffer-placement` found that the host touches no buffer's
    elements (`zero.gpu_memory = "device"` on the module), `malloc` becomes
    `zero_rt_gpu_alloc_device` instead: device memory. The host waits for
    the kernels in flight before it touches memory (`gpu-async-region` runs
    earlier in the pipeline), so host and device never touch a buffer at the
    same time. Calls to `zero_rt_host_alloc` (what `zero.host_alloc` lowers
    to) become `zero_rt_gpu_alloc_host`, pinned host memory, and those to
    `zero_rt_host_alloc_staging` (a `staging` one) `zero_rt_gpu_alloc_staging`.

    ```mlir
    %p = llvm.call @malloc(%bytes) : (i64) -> !llvm.ptr
    // becomes
    %p = llvm.call @zero_rt_gpu_alloc(%bytes) : (i64) -> !llvm.ptr
    ```

    A module that already defines `zero_rt_gpu_alloc` or `zero_rt_gpu_free`
    differently is reported and left unchanged.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def ZeroGpuModulesToBinary : Pass<"zero-gpu-modules-to-binary",
                                  "mlir::ModuleOp"> {
  let summary = "Serializes the module's GPU modules to binaries, in "
                "parallel";
  let description = [{
    Upstream's `gpu-module-to-binary`, with each `gpu.module` serialized on
    a thread of its own: a step lowers to one module per kernel, hundreds
    for a model (GPT-2 small's offloaded step: 17.9 of its 23 s of
    `zero-compile --target=cuda` in the upstream pass, one module after
    another), and each one's translation to LLVM IR, NVPTX code generation
    and `ptxas` run are independent of the others'. Each module's targets
    (`#nvvm.target`, attached by `gpu-nvvm-attach-target`) serialize it
    (`TargetAttrInterface::serializeToObject`) on MLIR's thread pool (none
    where the context's threading is off: `--mlir-disable-threading`); the
    module then becomes a `gpu.binary` of its objects, in the modules'
    order, as upstream's makes it, so that the output does not depend on
    the threads. A module without a target, or one whose serialization
    fails, is an error on it (with the serializer's own message first),
    and nothing is replaced.

    ```
    zero-opt kernels.mlir --zero-gpu-modules-to-binary='format=isa'
    ```
  }];
  let options = [
    Option<"format", "format", "::zero::GpuFormat",
           /*default=*/"::zero::GpuFormat::Auto",
           "How kernels are embedded", [{::zero::gpuFormatValues()}]>,
    Option<"cudaPath", "cuda-path", "std::string",
           /*default=*/"ZERO_DEFAULT_CUDA_PATH",
           "The CUDA toolkit (ptxas, libdevice)">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

#endif // ZERO_TARGET_GPU_PASSES_TD
