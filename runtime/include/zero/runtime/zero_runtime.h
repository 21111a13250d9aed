/*===- zero_runtime.h - zero's runtime C ABI ----------------------*- C -*-===*
 *
 * The runtime that compiled zero programs call, and that launchers (zero-run,
 * tests, a trainer) drive. It builds with a C++ compiler alone: no LLVM/MLIR.
 *
 * Two layers:
 *  - The launcher API (zero_world_*, zero_rank_*): create a world of N ranks
 *    on a backend, hand each rank to the thread that runs it, read errors and
 *    counters.
 *  - The compiled-code API (zero_rt_*): what `zero-lower-to-runtime` emits
 *    calls to. It acts on the rank bound to the calling thread
 *    (zero_rank_bind), so generated code carries no context argument.
 *
 * A group is described by one int64 array, emitted as a constant by the
 * lowering:
 *   { mesh_rank, shape[0], ..., shape[mesh_rank-1], num_axes, axes[0], ... }
 * Ranks sit on the mesh in row-major order; the group of a rank is every rank
 * that shares its coordinates off the named axes, and its index in the group
 * is its coordinates on the named axes, linearized row-major in the order the
 * axes are named. The mesh must have as many ranks as the world.
 *
 * Errors. A launcher-API call returns 0 on success and non-zero on error, with
 * the message in zero_world_error(). A compiled-code call cannot return an
 * error to generated code; when it fails (ranks disagree on a collective, a
 * rank failed, a timeout) the world is marked failed with one message naming
 * the collective and the ranks, and every later call on every rank returns at
 * once without touching data. The launcher then reports the error and writes
 * no outputs. On the mpi backend the failing process prints the message and
 * calls MPI_Abort, which ends every rank.
 *
 *===----------------------------------------------------------------------===*/

#ifndef ZERO_RUNTIME_ZERO_RUNTIME_H
#define ZERO_RUNTIME_ZERO_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element types. */
typedef enum zero_dtype {
  ZERO_F32 = 0,
  ZERO_BF16 = 1,
  ZERO_F16 = 2,
  ZERO_F64 = 3,
  ZERO_I32 = 4,
  ZERO_I64 = 5,
  ZERO_I8 = 6 /* int8: block-quantized values (zero.quantize) */
} zero_dtype;

/* Reductions; the values match the dialect's ReductionKind. */
typedef enum zero_reduction {
  ZERO_SUM = 0,
  ZERO_MEAN = 1,
  ZERO_MAX = 2,
  ZERO_MIN = 3
} zero_reduction;

/* Collective kinds, the index into the counters. */
typedef enum zero_collective_kind {
  ZERO_ALL_REDUCE = 0,
  ZERO_REDUCE_SCATTER = 1,
  ZERO_ALL_GATHER = 2,
  ZERO_ALL_TO_ALL = 3,
  ZERO_NUM_COLLECTIVE_KINDS = 4
} zero_collective_kind;

/* The tracks of a rank in a trace (zero-launch --trace, Chrome's format):
   the "tid" of its events. zero-trace-render and the overlap benchmark read
   them back by these numbers. */
typedef enum zero_trace_track {
  ZERO_TRACK_COMPUTE = 0,
  ZERO_TRACK_COMMUNICATION = 1,
  ZERO_NUM_TRACKS = 2
} zero_trace_track;

typedef struct zero_world zero_world;
typedef struct zero_rank zero_rank;
typedef struct zero_handle zero_handle;

typedef struct zero_options {
  /* "local" (the default when NULL), "cuda-local", "mpi" or "nccl". local:
     each rank a thread, collectives on the host. cuda-local: each rank a
     thread sharing GPU 0, collectives as kernels on the GPU, ordered against
     each rank's stream by CUDA events (buffers must be GPU memory: a GPU
     artifact's). mpi: one process per rank, under mpirun. nccl: one process
     per GPU, under mpirun or torchrun-style (RANK, WORLD_SIZE, MASTER_ADDR,
     MASTER_PORT), NCCL on a communication stream ordered by CUDA events. */
  const char *backend;
  /* Ranks of a local or cuda-local world (cuda-local: at most 64); ignored
     by mpi (the world is mpirun's). */
  int32_t ranks;
  /* Seconds a rank waits for the others in a collective before the world
     fails; <= 0 means 60. */
  double timeout_seconds;
  /* Whether ranks check that they agree on each collective (kind, element
     count, dtype, reduction, group) before running it: mpi and nccl
     exchange a description of it first, the local backends compare what
     the members posted. On by default; a launcher turns it off for a
     program whose collectives the compiler proved alike on every rank
     (zero-verify-collectives). Every wait keeps its timeout either way. */
  int32_t check;
} zero_options;

/* Per-rank counters. Bytes are what a ring algorithm sends per rank:
   all-reduce 2(n-1)/n of the buffer, reduce-scatter and all-gather (n-1)/n of
   the whole buffer, all-to-all (n-1)/n of its buffer (the parts it sends to
   the others), n the group size. */
typedef struct zero_counters {
  uint64_t bytes_sent[ZERO_NUM_COLLECTIVE_KINDS];
  uint64_t issued[ZERO_NUM_COLLECTIVE_KINDS];
  /* Buffers the rank's zero_rt_alloc and zero_rt_gpu_alloc* calls took from
     the system (malloc, the CUDA driver), not from the rank's pool of freed
     ones: a step that allocates what the step before freed adds none. */
  uint64_t system_allocations;
} zero_counters;

/*--- Launcher API ----------------------------------------------------------*/

/* Fills `options` with the defaults. */
void zero_options_init(zero_options *options);
/* Creates a world. On error returns non-zero and, when `error` is not NULL,
   copies the message into it (at most `error_size` bytes). */
int zero_world_create(const zero_options *options, zero_world **world,
                      char *error, size_t error_size);
/* Ends the world; on mpi, finalizes MPI. */
void zero_world_destroy(zero_world *world);
/* Ranks in the world, and how many of them live in this process. */
int32_t zero_world_size(const zero_world *world);
int32_t zero_world_num_local_ranks(const zero_world *world);
/* The i-th rank of this process, 0 <= i < zero_world_num_local_ranks. */
zero_rank *zero_world_local_rank(zero_world *world, int32_t i);
/* The first error of any rank, or NULL while there is none. */
const char *zero_world_error(const zero_world *world);

/* The rank bound to the calling thread, or NULL. */
zero_rank *zero_bound_rank(void);
/* This rank's id in the world. */
int32_t zero_rank_id(const zero_rank *rank);
/* Binds `rank` to the calling thread for the zero_rt_* calls (NULL unbinds). */
void zero_rank_bind(zero_rank *rank);
/* Fails the world from this rank: every rank's pending and later collectives
   end with `message` (on mpi, the job is aborted). */
void zero_rank_fail(zero_rank *rank, const char *message);
void zero_rank_counters(const zero_rank *rank, zero_counters *counters);
/* A barrier over the world for a launcher, between the program's calls: it
   is numbered apart from the program's collectives, and not counted or
   traced. `scratch` is 8 bytes the backend moves (managed memory on a GPU
   backend). Returns 0, or nonzero when the world failed. */
int zero_rank_barrier(zero_rank *rank, void *scratch);

/* Tracing. While a world traces, each local rank records a timeline with
   two tracks: computation (the time between runtime calls, and the time
   spent blocked in waits) and communication (each collective from when the
   backend began it to when it finished; on mpi, from its start to the wait
   that saw it complete; on cuda-local and nccl, its kernels on the device,
   by CUDA event timestamps, the wait then waiting for its end). On a GPU
   the computation track is the rank's kernels and cuBLAS calls on the
   device, by CUDA event timestamps, which zero_rank_trace_end (on the
   rank's thread, after the device is done) reads. zero_rank_trace_begin
   clears the rank's timeline and starts its computation track now;
   zero_rank_trace_end closes it. */
void zero_world_set_tracing(zero_world *world, int32_t enable);
void zero_rank_trace_begin(zero_rank *rank);
void zero_rank_trace_end(zero_rank *rank);
/* Writes the local ranks' timelines as a Chrome trace (JSON; open it in
   Perfetto or chrome://tracing): one process per rank, one thread per
   track, times in microseconds from the world's creation. Returns non-zero
   with a message on error. */
int zero_world_write_trace(const zero_world *world, const char *path,
                           char *error, size_t error_size);

/* Explicit-rank collectives, non-blocking: each returns a handle (never NULL)
   to pass to zero_wait exactly once. `count` is the element count of `in`
   for all-reduce and reduce-scatter (the output holds count/n), and of `in`
   for all-gather (the output holds count*n). All-to-all splits `in` into n
   equal parts and sends part j to the member with group index j, which
   stores it as part i of its `out` (count elements), i the sender's group
   index. */
zero_handle *zero_all_reduce(zero_rank *rank, const void *in, void *out,
                             int64_t count, zero_dtype dtype,
                             zero_reduction reduction, const int64_t *group);
zero_handle *zero_reduce_scatter(zero_rank *rank, const void *in, void *out,
                                 int64_t count, zero_dtype dtype,
                                 zero_reduction reduction,
                                 const int64_t *group);
zero_handle *zero_all_gather(zero_rank *rank, const void *in, void *out,
                             int64_t count, zero_dtype dtype,
                             const int64_t *group);
zero_handle *zero_all_to_all(zero_rank *rank, const void *in, void *out,
                             int64_t count, zero_dtype dtype,
                             const int64_t *group);
/* Waits for the collective; returns 0, or non-zero when the world failed. */
int zero_wait(zero_handle *handle);
/* The collectives `rank` starts between these two calls form one batch,
   which a backend may issue together (nccl: one ncclGroupStart/End, so NCCL
   launches them as one). Every rank of a group must batch the group's
   collectives alike; batches do not nest. Waiting for a collective of an
   open batch issues the batch so far. */
void zero_batch_begin(zero_rank *rank);
void zero_batch_end(zero_rank *rank);

/*--- GPU (CUDA) ------------------------------------------------------------*/

/* The runtime loads the CUDA driver (libcuda.so.1) when a GPU is first asked
   for, not at link time: with no GPU, the CPU backends work as before.
   Programs compiled for the GPU keep their buffers in device memory when
   their host code never touches a buffer's elements (the artifact's
   "memory": "device"), else in managed memory, and launch kernels through
   the mgpu* functions below (the names and signatures
   MLIR's gpu-to-llvm lowering calls), on the process's GPU (zero_gpu_init). A
   CUDA error fails the bound rank's world with a message naming the call, the
   kernel and CUDA's text; zero_gpu_error() holds the first one. */

/* Sets up the GPU: returns 0, or non-zero with the reason (no driver, no
   device) copied into `error`. The process uses one GPU: ZERO_GPU_DEVICE
   if set, else its local rank (LOCAL_RANK from torchrun,
   OMPI_COMM_WORLD_LOCAL_RANK from mpirun, ...) modulo the visible devices,
   else device 0. */
int zero_gpu_init(char *error, size_t error_size);
/* The device's architecture, as "sm_90", and its name; after
   zero_gpu_init. */
void zero_gpu_device(char *chip, size_t chip_size, char *name,
                     size_t name_size);
/* The first CUDA error of the process, or NULL. */
const char *zero_gpu_error(void);
/* Managed memory that the host and every kernel reach. Allocation failure
   (device memory exhausted) ends the process with a message: compiled code
   cannot continue without its buffer. */
void *zero_rt_gpu_alloc(int64_t bytes);
/* Device memory, which only kernels and the copies below reach; failure as
   for zero_rt_gpu_alloc. */
void *zero_rt_gpu_alloc_device(int64_t bytes);
/* Pinned host memory, mapped for the device (cuMemHostAlloc): where an
   offloaded program keeps its optimizer state and runs its update (zero's
   offload=optimizer); copies to and from it run at the link's speed, and
   a kernel or collective may read it. Failure as for zero_rt_gpu_alloc,
   naming the bytes asked for. */
void *zero_rt_gpu_alloc_host(int64_t bytes);
/* Frees any of the three kinds. Freed memory is kept for the next allocation of
   the same size and kind by the same rank (a program allocates the same buffers
   every step; another rank's stream may not yet be ordered after the work
   that used it), and returned to the driver, once the device is idle, when
   an allocation does not fit. */
void zero_rt_gpu_free(void *pointer);
/* Copies `bytes` between host and device memory (or within the device);
   returns 0, or non-zero with the reason in zero_gpu_error(). */
int zero_gpu_copy_to_device(void *device, const void *host, size_t bytes);
int zero_gpu_copy_to_host(void *host, const void *device, size_t bytes);
int zero_gpu_copy_on_device(void *to, const void *from, size_t bytes);
/* Waits until the device is idle. */
void zero_rt_gpu_synchronize(void);
/* Copies `bytes` from GPU memory to the host, or from the host to GPU
   memory (compiled code's scalar reads and writes of device buffers: a
   norm the host turns into a factor), in order on the calling thread's
   stream: a read returns once the stream's earlier work and the copy are
   done; a write is staged before it returns, and the stream's later
   kernels see it. Errors fail the bound rank's world. */
void zero_rt_gpu_read(void *host, const void *gpu, int64_t bytes);
void zero_rt_gpu_write(void *gpu, const void *host, int64_t bytes);
/* Copies `bytes` from host memory (pinned: an offloaded update's result)
   to GPU memory in order on the calling thread's stream, and returns once
   the copy is done, so that the host may reuse its buffer at once. Errors
   fail the bound rank's world. */
void zero_rt_gpu_upload(void *gpu, const void *host, int64_t bytes);
/* C[m, n] += op(A)[m, k] op(B)[k, n], row-major with leading dimensions
   (row strides, in elements) lda, ldb, ldc, on the calling thread's stream
   with cuBLAS (cublasGemmEx, loaded at run time). op(X) is X as stored, or,
   where transpose_x is 1, the transpose of what is stored: A stored k x m,
   B stored n x k (a linalg.matmul whose indexing maps transpose an operand,
   or an operand in column-major layout), so that no transposed copy is
   made. Inputs f32, f64, bf16 or f16; the output the inputs' type, or f32
   for bf16 and f16 inputs (accumulated in f32). Errors fail the bound
   rank's world. */
void zero_rt_gpu_matmul(int32_t input_dtype, int32_t output_dtype, int64_t m,
                        int64_t n, int64_t k, const void *a, int64_t lda,
                        int32_t transpose_a, const void *b, int64_t ldb,
                        int32_t transpose_b, void *c, int64_t ldc);

/*--- Compiled-code API (acts on the bound rank) ----------------------------*/

int64_t zero_rt_rank(void);
int64_t zero_rt_size(void);
/* This rank's index in `group`. */
int64_t zero_rt_group_index(const int64_t *group);
void zero_rt_all_reduce(const void *in, void *out, int64_t count, int32_t dtype,
                        int32_t reduction, const int64_t *group);
void zero_rt_reduce_scatter(const void *in, void *out, int64_t count,
                            int32_t dtype, int32_t reduction,
                            const int64_t *group);
/* `in` may be this rank's own part of `out` (`out` plus its group index
   times `count` elements): a gather in place, as NCCL's and MPI_IN_PLACE's. */
void zero_rt_all_gather(const void *in, void *out, int64_t count, int32_t dtype,
                        const int64_t *group);
void zero_rt_all_to_all(const void *in, void *out, int64_t count, int32_t dtype,
                        const int64_t *group);
zero_handle *zero_rt_all_reduce_start(const void *in, void *out, int64_t count,
                                      int32_t dtype, int32_t reduction,
                                      const int64_t *group);
zero_handle *zero_rt_reduce_scatter_start(const void *in, void *out,
                                          int64_t count, int32_t dtype,
                                          int32_t reduction,
                                          const int64_t *group);
zero_handle *zero_rt_all_gather_start(const void *in, void *out, int64_t count,
                                      int32_t dtype, const int64_t *group);
zero_handle *zero_rt_all_to_all_start(const void *in, void *out, int64_t count,
                                      int32_t dtype, const int64_t *group);
/* Waits for a started collective; a null handle (a loop's first request,
   with nothing in flight) returns at once. */
void zero_rt_wait(zero_handle *handle);
/* zero_batch_begin and zero_batch_end on the bound rank: zero-lower-to-runtime
   brackets collectives started one after another with them. */
void zero_rt_batch_begin(void);
void zero_rt_batch_end(void);
/* Copies a strided buffer into another of the same shape (MLIR's
   `memrefCopy`, which compiled code calls for a copy between layouts):
   `source` and `target` point at unranked memrefs { int64_t rank; void
   *descriptor; }, each descriptor { allocated, aligned, offset, sizes[rank],
   strides[rank] }. */
void zero_rt_memref_copy(int64_t element_bytes, void *source, void *target);
/* Host memory for compiled code's buffers (MLIR's generic allocation
   functions, _mlir_memref_to_llvm_alloc and _mlir_memref_to_llvm_free, which
   zero's CPU pipeline calls) and for a launcher's: 64-byte aligned. A freed
   buffer is kept in the pool of the rank bound to the freeing thread, and
   the next allocation of the same size (rounded up to 64 bytes) by that rank
   takes it; only the others reach the system allocator. Allocation failure
   ends the process with a message, after returning the pools to the system
   and trying again. zero_rt_free also frees memory of the system allocator
   that is not the runtime's. */
void *zero_rt_alloc(int64_t bytes);
void zero_rt_free(void *pointer);
/* A buffer that compiled code keeps in host memory beside a GPU (an
   offloaded update's state and staging buffers, zero.host_alloc): on the
   CPU, including the GPU's CPU replica, zero_rt_alloc's memory, freed by
   zero_rt_free; a GPU artifact calls zero_rt_gpu_alloc_host instead. */
void *zero_rt_host_alloc(int64_t bytes);
/* An offloaded update's staging buffer that only the rank's host queue uses
   (its gradient shard copied down, its new weight copied up), which the
   queue frees once its update is done (zero_rt_host_queue_free_staging):
   zero_rt_host_alloc's memory, or on a GPU zero_rt_gpu_alloc_staging's,
   pinned. The rank waits, before it takes one, while the staging it holds
   would pass its budget and its queue has frees of them still to run:
   ZERO_STAGING_BYTES a rank (0: no bound), 256 MiB by default. So the rank
   holds a bounded arena that it carves its staging out of, step after
   step, instead of one buffer for every update of the step. */
void *zero_rt_host_alloc_staging(int64_t bytes);
void *zero_rt_gpu_alloc_staging(int64_t bytes);
void zero_rt_host_queue_free_staging(void *pointer);
/* Runs task(context, begin, end) over chunks that cover [0, iterations),
   on the calling thread and the process's pool of host threads, and
   returns when all are done: an offloaded update's host loop
   (zero-offload-to-host) across the host's cores. The calling rank's share
   is the host's cores over the ranks of the process (or over
   LOCAL_WORLD_SIZE / OMPI_COMM_WORLD_LOCAL_SIZE when each process runs
   one rank), at least one; ZERO_HOST_THREADS sets it. Chunks hold at least
   4096 elements (ZERO_HOST_CHUNK sets it), an iteration being `grain`
   elements (a row that the task runs whole; 1 for a loop over elements).
   The rank stays bound while its chunks run. */
void zero_rt_parallel_for(void (*task)(void *, int64_t, int64_t), void *context,
                          int64_t iterations, int64_t grain);
/* The calling rank's host queue: an offloaded update's host work, run in
   the order queued on a thread of the rank's own while the rank goes on
   (zero-offload-to-host queues it, so that the host's update of one bucket
   overlaps the device's work on the next):
   - zero_rt_host_queue_for: zero_rt_parallel_for(task, a copy of the
     context_bytes at context, iterations), run from the queue;
   - zero_rt_host_queue_copy: copies `bytes` from `from` to `to` (host
     memory, the GPU's CPU replica) from the queue;
   - zero_rt_gpu_queue_copy: the same across the link, on the queue thread's
     own stream, done before the queue's next work;
   - zero_rt_host_queue_fence: the queue's later work waits for the work the
     rank put on its GPU stream so far (an event; nothing where the rank has
     no stream, as on the CPU);
   - zero_rt_host_queue_update: an update's host loop with the copies it
     needs, pipelined in chunks of its iterations: chunk k + 1's copies in
     start while the loop runs over chunk k (zero_rt_parallel_for over
     it) and chunk k - 1's copies out go. `copies` holds copies_in +
     copies_out triples (to, from, bytes per iteration): iteration i's
     bytes are at offset i * bytes of each; a triple whose bytes are
     negative copies -bytes whole, before the first chunk (in) or after the
     last (out): a buffer that does not split by the iterations. A chunk
     moves about chunk_bytes bytes of copies (the compiler's choice; 0: the
     whole update is one chunk), or ZERO_HOST_QUEUE_CHUNK where set.
     `staged` holds staged_count triples (bytes, context slot, copy) for
     the staging buffers that only the update uses and copies out (an
     offloaded weight's new shard, copied up): the queue takes each, as
     zero_rt_host_alloc_staging's (zero_rt_gpu_alloc_staging's on a GPU)
     from the rank's arena, when it runs the update, never waiting, and
     writes its address into the context's 64-bit slot `context slot` and
     as copy `copy`'s source (a copy out: copies_in <= copy < copies_in +
     copies_out), whatever the rank put there; it gives it back once the
     update's copies out are done. So the rank holds no such buffer for
     the updates it has queued but the queue has not run (a delayed step
     queues them all at its start). Host memory (the CPU replica);
   - zero_rt_gpu_queue_update: the same across the link: the copies in
     (down to the host) start at once, on the rank's copy stream after the
     work the rank put on its stream so far, and the queue waits for each
     chunk's before its loop; the copies out go on the queue thread's own
     stream;
   - zero_rt_host_queue_free: frees a buffer of compiled code's
     (zero_rt_free) once the queue's work before it is done: a gradient
     shard that the queue's updates copy down goes back to the rank's pool
     as soon as the queue has copied it, not when the rank waits for the
     queue. The pointer is the buffer's as the runtime's allocator gave it
     (every allocator of the runtime aligns to 64 bytes at least, so a
     buffer's aligned pointer is that one where it asks for no more);
   - zero_rt_gpu_free_after_copies: the same on a GPU, where the rank
     itself started the copies down (zero_rt_gpu_queue_update): the device
     buffer goes back to the rank's pool at once, and the rank's stream
     waits for those copies when the rank takes it again, so that the free
     takes effect where the rank makes it, however far ahead of the GPU the
     rank runs;
   - zero_rt_gpu_queue_free: a GPU buffer of compiled code's
     (zero_rt_gpu_free) freed from the queue once its work before is done:
     one that zero_rt_gpu_queue_copy copies down, on the queue's thread (a
     delayed update's gradient shard, a weight gathered on the device into
     its host argument), goes back to the rank's pool once copied, not when
     the rank waits for the queue;
   - zero_rt_gpu_copy_down: copies `bytes` from a GPU buffer to host
     memory on the rank's copy stream, after the work the rank put on its
     stream so far, and returns at once: the queue's work queued after it
     waits for the copy, and so does the rank's zero_rt_host_queue_join
     (a weight gathered on the device after the rank's wait for its queue,
     going into its host argument while the rank goes on). Until then the
     rank neither touches `to` nor writes `from`, which it frees with
     zero_rt_gpu_free_after_copies;
   - zero_rt_host_queue_mark: a ticket, the number of items the calling
     rank has queued so far (each call above queues one, or on a GPU none
     for zero_rt_gpu_free_after_copies);
   - zero_rt_host_queue_wait: returns once the items a ticket counts have
     run, while those queued after it may still run: the rank goes on with
     what needs only the first;
   - zero_rt_host_queue_join: returns once everything queued has run.
   Errors in queued work fail the queuing rank's world. */
void zero_rt_host_queue_for(void (*task)(void *, int64_t, int64_t),
                            void *context, int64_t context_bytes,
                            int64_t iterations);
void zero_rt_host_queue_copy(void *to, const void *from, int64_t bytes);
void zero_rt_host_queue_update(void (*task)(void *, int64_t, int64_t),
                               void *context, int64_t context_bytes,
                               int64_t iterations, const int64_t *copies,
                               int64_t copies_in, int64_t copies_out,
                               int64_t chunk_bytes, const int64_t *staged,
                               int64_t staged_count);
void zero_rt_gpu_queue_update(void (*task)(void *, int64_t, int64_t),
                              void *context, int64_t context_bytes,
                              int64_t iterations, const int64_t *copies,
                              int64_t copies_in, int64_t copies_out,
                              int64_t chunk_bytes, const int64_t *staged,
                              int64_t staged_count);
void zero_rt_gpu_queue_copy(void *to, const void *from, int64_t bytes);
void zero_rt_gpu_copy_down(void *to, const void *from, int64_t bytes);
void zero_rt_host_queue_free(void *pointer);
void zero_rt_gpu_free_after_copies(void *pointer);
void zero_rt_gpu_queue_free(void *pointer);
void zero_rt_host_queue_fence(void);
int64_t zero_rt_host_queue_mark(void);
void zero_rt_host_queue_wait(int64_t ticket);
void zero_rt_host_queue_join(void);
/* Returns every rank's pooled host memory to the system (zero_world_destroy
   does). */
void zero_host_memory_release(void);
/* C[m, n] += op(A)[m, k] op(B)[k, n] on the host, with zero_rt_gpu_matmul's
   arguments and types, in a GPU GEMM's order of operations: each dot
   product accumulated from zero with fused multiply-adds (in f32, or f64
   for f64), then added to C; vectorized across C's columns (each lane its
   own sum, so the bits are the same on every host) and split across the
   rank's share of the host's threads (zero_rt_parallel_for's rule).
   zero-gemm-calls
   emits it with its `host` option, so that the GPU pipeline's structure
   runs on the CPU (zero-to-llvm{gpu-loops}) with its matmuls calls too.
   With accumulate 0, C's old value is not read: each element is its sum
   plus zero, the bits a zero-filled C gives (zero-gemm-calls drops the fill
   of +0.0 before the matmul). Unsupported dtypes fail the bound rank's
   world. */
void zero_rt_host_matmul(int32_t input_dtype, int32_t output_dtype, int64_t m,
                         int64_t n, int64_t k, const void *a, int64_t lda,
                         int32_t transpose_a, const void *b, int64_t ldb,
                         int32_t transpose_b, void *c, int64_t ldc,
                         int32_t accumulate);
/* Names the next collective the bound rank starts, in traces (a bucket). The
   string must outlive the call (compiled code passes a constant). */
void zero_rt_label(const char *label);
/* A run-time check of compiled code (an index within its buffer): unless
   `holds`, ends the process with `message`, naming the bound rank, after
   failing its world (which under mpi or nccl ends the job). Compiled code
   cannot unwind, and the access it guards must not happen. */
void zero_rt_check(int32_t holds, const char *message);

#ifdef __cplusplus
}
#endif

#endif /* ZERO_RUNTIME_ZERO_RUNTIME_H */
