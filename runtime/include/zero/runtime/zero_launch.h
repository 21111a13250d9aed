/*===- zero_launch.h - run an artifact's steps, from C ------------*- C -*-===*
 *
 * The launcher (Launcher.h) for a trainer in C: load an artifact that
 * zero-compile wrote, run its step K times on every rank of a world (the
 * state results feed the state arguments from one step to the next, in the
 * artifact's memory), read the results. zero-launch does the same from the
 * command line. The program that calls these must export the runtime's
 * symbols to the artifact, as zero-launch does (link the runtime whole and
 * export it: CMake's ENABLE_EXPORTS).
 *
 * Every call that can fail returns 0 on success, else non-zero with the
 * message in `error` (at most `error_size` bytes).
 *
 *===----------------------------------------------------------------------===*/

#ifndef ZERO_RUNTIME_ZERO_LAUNCH_H
#define ZERO_RUNTIME_ZERO_LAUNCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A loaded artifact. */
typedef struct zero_artifact zero_artifact;

/** Loads the artifact at `path` and checks its description. */
int zero_artifact_open(const char *path, zero_artifact **artifact, char *error,
                       size_t error_size);
void zero_artifact_close(zero_artifact *artifact);
/** The entry's arguments and results. */
size_t zero_artifact_num_arguments(const zero_artifact *artifact);
size_t zero_artifact_num_results(const zero_artifact *artifact);

typedef struct zero_launch_options {
  /** local (the default for a CPU artifact), cuda-local (for a GPU one),
   *  mpi or nccl. NULL: by the artifact. */
  const char *backend;
  /** Ranks of a local world; 0: the artifact's mesh. */
  int32_t ranks;
  double timeout_seconds;
  /** Steps per call: state results feed state arguments (the description's
   *  "state_of"); the other arguments are new each step. */
  int64_t steps;
  /** Seed of generated arguments (the step is mixed in). */
  uint64_t seed;
  /** Per argument, a .npy file ({rank}, {step} replaced) or NULL: generated
   *  uniform in [-1, 1). NULL: every argument generated. */
  const char *const *argument_files;
  /** Per argument, non-zero when its generated value differs per rank (a
   *  gradient, data). NULL: none does. */
  const int32_t *per_rank;
  /** Where to write a Chrome trace; NULL: none. */
  const char *trace_path;
  /** Where to save the state as a sharded checkpoint (Checkpoint.h) after
   *  the last step, and every `save_every` steps when positive; NULL:
   *  nowhere. */
  const char *save_dir;
  int64_t save_every;
  /** A checkpoint to start from (its latest, or a step-<K> directory): its
   *  state replaces the state arguments, and the steps go on from its step.
   *  NULL: none. */
  const char *load_dir;
  /** Without a checkpoint, the number of the first step (the step in the
   *  seed and in {step}). */
  int64_t first_step;
} zero_launch_options;

void zero_launch_options_init(zero_launch_options *options);

/** What a launch computed: per rank of this process, the last step's
 *  results. */
typedef struct zero_launch_result zero_launch_result;

/** Runs the artifact's entry `options->steps` times on every rank. */
int zero_launch_steps(const zero_artifact *artifact,
                      const zero_launch_options *options,
                      zero_launch_result **result, char *error,
                      size_t error_size);
void zero_launch_result_destroy(zero_launch_result *result);
/** The ranks this process ran, and the world rank of the i-th. */
int32_t zero_launch_result_num_ranks(const zero_launch_result *result);
int32_t zero_launch_result_rank(const zero_launch_result *result, int32_t i);
/** Result `index` of the i-th rank: its bytes (dense, row-major) and their
 *  number; NULL when there is no such result. Valid until the result is
 *  destroyed. */
const void *zero_launch_result_data(const zero_launch_result *result, int32_t i,
                                    size_t index, size_t *bytes);
/** Writes every result as DIR/rank<r>/result<i>.npy, as zero-launch
 *  --output-dir does. */
int zero_launch_result_write(const zero_launch_result *result, const char *dir,
                             char *error, size_t error_size);

#ifdef __cplusplus
}
#endif

#endif /* ZERO_RUNTIME_ZERO_LAUNCH_H */
