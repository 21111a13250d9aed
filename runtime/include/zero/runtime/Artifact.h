//===- Artifact.h - load a program compiled ahead of time --------*- C++
//-*-===//
//
// zero-compile turns a zero program into one shared library, the artifact. It
// exports:
//   zero_artifact_entry        void (void **args): the entry function, packed
//                              (see PackedCall.h);
//   zero_artifact_description  const char[]: JSON saying what the entry takes
//                              and returns, and what it was built for:
//
//   { "format": "zero-artifact", "version": 1, "runtime_abi": 1,
//     "target": "cpu" | "cuda", "chip": "sm_90" (cuda only),
//     "kernels": "cubin" | "ptx" (cuda only: made by ptxas, or PTX that the
//               driver compiles at load),
//     "memory": "host" | "device" | "managed", where the buffers live (cuda:
//               "device" when the host code never touches their elements,
//               else "managed" and "memory_reason" says which op does),
//     "collectives": "device" | "host" (cuda only: whether collectives
//               move data on the GPU, with cuda-local or nccl, or on the
//               host, with local or mpi),
//     "entry": "step",
//     "ranks": 4,                        (ranks of the mesh; 0: no mesh)
//     "arguments": [ { "name": "arg0", "dtype": "f32", "shape": [7, 13],
//                      "tensor": true, "per_rank": false }, ...,
//                    { "name": "arg4", "dtype": "f32", "shape": [23], ...,
//                      "per_rank": true,
//                      "shard": { "whole": [7, 13], "shard_elements": 23,
//                                 "group_index": [0, 1, 2, 3] } } ],
//     "results": [ ... ] }
//
// A value with a "shard" is each rank's part of a whole tensor (#zero.shard):
// a launcher passes the part of the whole value at the rank's group index.
// Artifact loads the library and reads the description; the runtime ABI it
// was built against must be this runtime's.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_ARTIFACT_H
#define ZERO_RUNTIME_ARTIFACT_H

#include "zero/runtime/PackedCall.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

/// The version of the ABI between compiled code and this runtime: the zero_rt_*
/// and GPU launch functions, and the packed entry. An artifact records the
/// one it was built for.
#define ZERO_RUNTIME_ABI_VERSION 1

namespace zero::rt {

/// How a shard argument or result lies in its whole tensor.
struct ShardLayout {
  std::vector<int64_t> whole;
  int64_t shardElements = 0;
  /// The group index of each world rank.
  std::vector<int64_t> groupIndex;

  int64_t getWholeElements() const;
};

struct ArtifactValue {
  std::string name;
  ValueType type;
  std::optional<ShardLayout> shard;
};

struct ArtifactDescription {
  int64_t version = 0;
  int64_t runtimeAbi = 0;
  std::string target;
  std::string chip;
  /// "host", "device" or "managed" (older descriptions: by target).
  std::string memory;
  std::string memoryReason;
  /// "host" or "device" (older descriptions: host).
  std::string collectives;
  std::string entry;
  int64_t ranks = 0;
  std::vector<ArtifactValue> arguments, results;
};

/// Parses a description (the JSON above). Returns an error message, empty on
/// success.
std::string parseArtifactDescription(const std::string &json,
                                     ArtifactDescription &description);

/// A loaded artifact.
class Artifact {
public:
  /// Loads the shared library at `path` and checks its description. On
  /// error returns null and sets `error`.
  static std::unique_ptr<Artifact> open(const std::string &path,
                                        std::string &error);
  ~Artifact();

  const ArtifactDescription &getDescription() const { return description; }
  const std::string &getDescriptionText() const { return descriptionText; }
  using EntryFn = void (*)(void **);
  EntryFn getEntry() const { return entry; }

private:
  Artifact() = default;
  void *handle = nullptr;
  EntryFn entry = nullptr;
  std::string descriptionText;
  ArtifactDescription description;
};

} // namespace zero::rt

#endif // ZERO_RUNTIME_ARTIFACT_H
