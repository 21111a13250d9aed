/* Runs an artifact's training step for a number of steps on every rank and
 * writes the results: the launcher's C interface (zero_launch.h) as a
 * trainer in C uses it.
 *
 *   zero-launch-steps [--save DIR] [--load DIR] ARTIFACT STEPS OUTPUT_DIR
 *                     [PER_RANK_ARGUMENT...]
 *
 * Generated arguments (seed 1) are the same on every rank except those
 * named, which differ per rank (the gradients). --save writes the state
 * after the last step as a checkpoint; --load starts from one. */

#include "zero/runtime/zero_launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  const char *save_dir = NULL, *load_dir = NULL;
  while (argc >= 3 &&
         (!strcmp(argv[1], "--save") || !strcmp(argv[1], "--load"))) {
    if (!strcmp(argv[1], "--save"))
      save_dir = argv[2];
    else
      load_dir = argv[2];
    argv += 2;
    argc -= 2;
  }
  if (argc < 4) {
    fprintf(stderr,
            "usage: %s [--save DIR] [--load DIR] ARTIFACT STEPS OUTPUT_DIR "
            "[PER_RANK...]\n",
            argv[0]);
    return 2;
  }
  char error[1024];
  zero_artifact *artifact;
  if (zero_artifact_open(argv[1], &artifact, error, sizeof error)) {
    fprintf(stderr, "error: %s\n", error);
    return 1;
  }
  size_t arguments = zero_artifact_num_arguments(artifact);
  int32_t *per_rank = calloc(arguments ? arguments : 1, sizeof *per_rank);
  for (int i = 4; i < argc; ++i) {
    long index = strtol(argv[i], NULL, 10);
    if (index >= 0 && (size_t)index < arguments)
      per_rank[index] = 1;
  }

  zero_launch_options options;
  zero_launch_options_init(&options);
  options.steps = strtoll(argv[2], NULL, 10);
  options.per_rank = per_rank;
  options.save_dir = save_dir;
  options.load_dir = load_dir;
  zero_launch_result *result;
  int failed =
      zero_launch_steps(artifact, &options, &result, error, sizeof error);
  if (!failed) {
    /* The first element of the first result (an f32 weight) on each rank. */
    for (int32_t i = 0; i < zero_launch_result_num_ranks(result); ++i) {
      size_t bytes;
      const float *w = zero_launch_result_data(result, i, 0, &bytes);
      printf("rank %d: %zu bytes, w[0] = %.9g\n",
             zero_launch_result_rank(result, i), bytes, w ? w[0] : 0.0f);
    }
    failed = zero_launch_result_write(result, argv[3], error, sizeof error);
    zero_launch_result_destroy(result);
  }
  if (failed)
    fprintf(stderr, "error: %s\n", error);
  free(per_rank);
  zero_artifact_close(artifact);
  return failed;
}
