//===- Checkpoint.h - sharded checkpoints of a training state ---*- C++ -*-===//
//
// A checkpoint directory holds one subdirectory per save, step-<K>, and a
// file `latest` naming the last complete one:
//
//   DIR/latest                      "step-K"
//   DIR/step-K/manifest.json        the state: each value's argument, name,
//                                   dtype, whole shape and shard layout
//                                   (flattened, padded to N * shard_elements,
//                                   part i on the rank with group index i),
//                                   the world size, the steps done
//   DIR/step-K/rank<r>/arg<j>.npy   rank r's value of argument j (its shard)
//   DIR/step-K/rank<r>/manifest.json  the sizes and FNV-1a checksums of the
//                                   rank's files
//
// Each rank writes its own files, each under a temporary name then renamed,
// and its manifest last; the step's manifest follows every rank's, and
// `latest` is renamed into place after it. A save cut short leaves `latest`
// naming the previous checkpoint, which stays whole.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CHECKPOINT_H
#define ZERO_RUNTIME_CHECKPOINT_H

#include "zero/runtime/Artifact.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace zero::rt {

/// One value of a training state.
struct CheckpointValue {
  /// The argument it is the value of.
  size_t argument = 0;
  std::string name;
  std::string dtype;
  /// The whole (logical) shape.
  std::vector<int64_t> shape;
  /// How it is cut into the ranks' parts; none: every rank holds it whole.
  std::optional<ShardLayout> shard;
  /// State that starts at zero (ArtifactValue::startsAtZero): an
  /// error-feedback residual or the delayed update's state, one row a
  /// rank, which means nothing to another world, so a reshard starts it at
  /// zero again.
  bool startsAtZero = false;

  /// The shape of one rank's file.
  std::vector<int64_t> getRankShape() const;
};

struct CheckpointManifest {
  std::string entry;
  int64_t worldSize = 0;
  /// Steps done: a run loaded from it goes on at this step.
  int64_t steps = 0;
  std::vector<CheckpointValue> values;
};

/// The state of `program`: the arguments that results feed (stateOf).
std::vector<CheckpointValue> getCheckpointValues(const Program &program);

/// Why `value` cannot be saved or read on a world of `worldSize`, or "": its
/// name is a file name, its dtype known, and each part of a sharded value
/// held by some rank.
std::string checkCheckpointValue(const CheckpointValue &value,
                                 int64_t worldSize);

/// "step-<steps>".
std::string checkpointStepName(int64_t steps);

/// One file of a rank's checkpoint, as the rank's manifest lists it.
struct CheckpointFile {
  std::string file;
  int64_t bytes = 0;
  std::string fnv1a64;
};

/// Writes `array`, the rank's part of `value`, as STEPDIR/rank<r>/<name>.npy
/// under a temporary name then renamed; `entry` gets its size and checksum.
std::string writeCheckpointFile(const std::string &stepDir, int32_t rank,
                                const CheckpointValue &value,
                                const Array &array, CheckpointFile &entry);

/// Writes STEPDIR/rank<r>/manifest.json, which lists `files`: the rank's
/// part is complete once it exists.
std::string writeRankManifest(const std::string &stepDir, int32_t rank,
                              const std::vector<CheckpointFile> &files);

/// Writes rank `rank`'s `values` (one per entry of `layout`), then its
/// manifest. Returns an error message, or "".
std::string writeRankCheckpoint(const std::string &stepDir, int32_t rank,
                                const std::vector<CheckpointValue> &layout,
                                const std::vector<Array> &values);

/// Writes DIR/step-<K>/manifest.json for `manifest`, then points DIR/latest
/// at it. Returns an error message, or "".
std::string writeCheckpointManifest(const std::string &dir,
                                    const CheckpointManifest &manifest);

/// Reads the checkpoint DIR/latest names (or DIR itself when it holds a
/// manifest.json): its manifest, and the directory of its files.
std::string readCheckpointManifest(const std::string &dir,
                                   CheckpointManifest &manifest,
                                   std::string &stepDir);

/// Checks that `saved` holds the values of `expected` (names, arguments,
/// dtypes, whole shapes, which are residuals that start at zero), however
/// each is cut; the error names the first difference. `acrossWorlds`
/// (a reshard) lets a residual's shape differ: it starts at zero there.
std::string checkSameState(const std::vector<CheckpointValue> &saved,
                           const std::vector<CheckpointValue> &expected,
                           bool acrossWorlds = false);

/// Checks that `manifest` is a state of `expected` on a world of
/// `worldSize`, cut as `expected` cuts it; the error names each difference.
std::string checkCheckpoint(const CheckpointManifest &manifest,
                            const std::vector<CheckpointValue> &expected,
                            int64_t worldSize);

/// Reads the list of rank `rank`'s files (its manifest): one per value of
/// `manifest`.
std::string readRankManifest(const std::string &stepDir, int32_t rank,
                             const CheckpointManifest &manifest,
                             std::vector<CheckpointFile> &files);

/// Reads rank `rank`'s part of `value` from `file`, checking its size and
/// checksum.
std::string readCheckpointFile(const std::string &stepDir, int32_t rank,
                               const CheckpointValue &value,
                               const CheckpointFile &file, Array &array);

/// Reads rank `rank`'s values, checking each file's size and checksum
/// against the rank's manifest.
std::string readRankCheckpoint(const std::string &stepDir, int32_t rank,
                               const CheckpointManifest &manifest,
                               std::vector<Array> &values);

/// Writes `manifest`'s state cut for another world, `target` (the same
/// values, each sharded as `target.values` says, or whole), into DIR/
/// step-<K>: one value at a time, each assembled whole from the ranks that
/// hold its parts then cut again, so that memory holds about one value; a
/// residual that starts at zero is written as zeros, since its rows were
/// the old world's ranks' own. `largestBytes` gets the largest value's
/// bytes.
std::string reshardCheckpoint(const std::string &stepDir,
                              const CheckpointManifest &manifest,
                              const std::string &dir,
                              const CheckpointManifest &target,
                              int64_t &largestBytes);

/// Writes each value of `manifest`'s state whole, as DIR/<name>.npy, one at
/// a time (DeepSpeed's zero_to_fp32).
std::string consolidateCheckpoint(const std::string &stepDir,
                                  const CheckpointManifest &manifest,
                                  const std::string &dir,
                                  int64_t &largestBytes);

/// The layout of `values` for a world of `worldSize` ranks on a 1-D mesh:
/// a sharded value cut in `worldSize` parts (flattened, padded to a
/// multiple), a whole one whole, a residual that starts at zero a row of
/// its length a rank.
std::vector<CheckpointValue>
cutForWorld(const std::vector<CheckpointValue> &values, int64_t worldSize);

/// The FNV-1a 64-bit hash of `bytes` taken 8 bytes at a time (each
/// little-endian 64-bit word, then the tail byte by byte), as 16 hex
/// digits: a rank's manifest lists it for each file's data (the elements
/// after the .npy header).
std::string fnv1a64(const std::vector<char> &bytes);

} // namespace zero::rt

#endif // ZERO_RUNTIME_CHECKPOINT_H
