//===- Files.h - the files the runtime's tools read and write ---*- C++ -*-===//
//
// Per-rank and per-step file names ("{rank}", "{step}"), directories, and a
// rank's values as .npy files: what the launcher, checkpoints and the tools
// share.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_FILES_H
#define ZERO_RUNTIME_FILES_H

#include "zero/runtime/Array.h"

#include <cstdint>
#include <string>
#include <vector>

namespace zero::rt {

/// `path` with each "{rank}" replaced by `rank`.
std::string withRank(std::string path, int32_t rank);
/// `path` with each "{step}" replaced by `step`.
std::string withStep(std::string path, int64_t step);

/// Creates directory `path` and its parents. Returns an error message, or
/// "".
std::string makeDirectories(const std::string &path);

/// Writes `values` as DIR/rank<rank>/<stem><i>.npy. Returns an error
/// message, or "".
std::string writeRankValues(const std::string &dir, int32_t rank,
                            const std::string &stem,
                            const std::vector<Array> &values);

} // namespace zero::rt

#endif // ZERO_RUNTIME_FILES_H
