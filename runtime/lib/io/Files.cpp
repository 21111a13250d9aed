//===- Files.cpp - the files the runtime's tools read and write ----------===//

#include "zero/runtime/Files.h"

#include <cerrno>
#include <cstring>
#include <sys/stat.h>

using namespace zero::rt;

std::string zero::rt::withRank(std::string path, int32_t rank) {
  for (size_t at; (at = path.find("{rank}")) != std::string::npos;)
    path.replace(at, 6, std::to_string(rank));
  return path;
}

std::string zero::rt::withStep(std::string path, int64_t step) {
  for (size_t at; (at = path.find("{step}")) != std::string::npos;)
    path.replace(at, 6, std::to_string(step));
  return path;
}

std::string zero::rt::makeDirectories(const std::string &path) {
  for (size_t at = 1; at <= path.size(); ++at)
    if (at == path.size() || path[at] == '/')
      if (mkdir(path.substr(0, at).c_str(), 0777) != 0 && errno != EEXIST)
        return "cannot create " + path.substr(0, at) + ": " +
               std::strerror(errno);
  return "";
}

std::string zero::rt::writeRankValues(const std::string &dir, int32_t rank,
                                      const std::string &stem,
                                      const std::vector<Array> &values) {
  std::string rankDir = dir + "/rank" + std::to_string(rank);
  if (std::string error = makeDirectories(rankDir); !error.empty())
    return error;
  for (size_t i = 0; i < values.size(); ++i)
    if (std::string error = writeNpy(
            rankDir + "/" + stem + std::to_string(i) + ".npy", values[i]);
        !error.empty())
      return error;
  return "";
}
