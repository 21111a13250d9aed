//===- Checkpoint.cpp - sharded checkpoints of a training state -----------===//

#include "zero/runtime/Checkpoint.h"
#include "io/Json.h"
#include "zero/runtime/Files.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

using namespace zero::rt;

std::vector<int64_t> CheckpointValue::getRankShape() const {
  if (shard)
    return {shard->shardElements};
  return shape;
}

std::vector<CheckpointValue> zero::rt::getCheckpointValues(const Program &p) {
  std::vector<CheckpointValue> values;
  std::vector<bool> fed = p.getFedArguments();
  for (size_t j = 0; j < fed.size(); ++j) {
    if (!fed[j])
      continue;
    const ArtifactValue &arg = p.getArguments()[j];
    CheckpointValue value;
    value.argument = j;
    value.name = arg.name;
    value.dtype = arg.type.dtype;
    value.shape = arg.shard ? arg.shard->whole : arg.type.shape;
    value.shard = arg.shard;
    value.startsAtZero = arg.startsAtZero;
    values.push_back(std::move(value));
  }
  return values;
}

std::string zero::rt::checkpointStepName(int64_t steps) {
  return "step-" + std::to_string(steps);
}

std::string zero::rt::fnv1a64(const std::vector<char> &bytes) {
  // Eight bytes a step (the 64-bit words, little-endian, then the tail one
  // byte at a time): a byte a step is bound by the multiply's latency, far
  // slower than the disk.
  uint64_t hash = 0xcbf29ce484222325ull;
  size_t words = bytes.size() / 8;
  for (size_t i = 0; i < words; ++i) {
    uint64_t word;
    std::memcpy(&word, bytes.data() + 8 * i, 8);
    hash ^= word;
    hash *= 0x100000001b3ull;
  }
  for (size_t i = 8 * words; i < bytes.size(); ++i) {
    hash ^= static_cast<unsigned char>(bytes[i]);
    hash *= 0x100000001b3ull;
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx",
                static_cast<unsigned long long>(hash));
  return text;
}

namespace {

/// The whole content of the regular file `path`, a manifest (at most 64
/// MiB: a device or a runaway file is refused, never read without bound),
/// or an error.
std::string readFile(const std::string &path, std::string &content) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return "cannot read " + path + (ec ? ": " + ec.message() : ": not a file");
  uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec || size > (uintmax_t(64) << 20))
    return "cannot read " + path + (ec ? ": " + ec.message() : ": too large");
  std::ifstream in(path, std::ios::binary);
  content.resize(size);
  if (!in.read(content.data(), static_cast<std::streamsize>(size)))
    return "cannot read " + path;
  return "";
}

/// Moves `temporary` to `path` in one step, replacing what was there.
std::string renameIntoPlace(const std::string &temporary,
                            const std::string &path) {
  if (std::rename(temporary.c_str(), path.c_str()) != 0)
    return "cannot rename " + temporary + " to " + path + ": " +
           std::strerror(errno);
  return "";
}

/// Writes `content` to `path` under a temporary name, then renames it.
std::string writeFileAtomically(const std::string &path,
                                const std::string &content) {
  std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << content;
    out.flush();
    if (!out)
      return "cannot write " + temporary;
  }
  return renameIntoPlace(temporary, path);
}

/// Writes `array` as the .npy file `path`, under a temporary name, then
/// renames it.
std::string writeNpyAtomically(const std::string &path, const Array &array) {
  std::string temporary = path + ".tmp";
  if (std::string error = writeNpy(temporary, array); !error.empty())
    return error;
  return renameIntoPlace(temporary, path);
}

std::string jsonIntegers(const std::vector<int64_t> &values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i)
    out += (i ? ", " : "") + std::to_string(values[i]);
  return out + "]";
}

std::vector<int64_t> integersOf(const Json *list) {
  std::vector<int64_t> out;
  if (list && list->kind == Json::List)
    for (const Json &item : list->list)
      out.push_back(static_cast<int64_t>(item.number));
  return out;
}

std::string stringOf(const Json &object, const std::string &key) {
  const Json *value = object.get(key);
  return value && value->kind == Json::String ? value->string : "";
}

int64_t integerOf(const Json &object, const std::string &key) {
  const Json *value = object.get(key);
  return value && value->kind == Json::Number
             ? static_cast<int64_t>(value->number)
             : -1;
}

/// The ranks a layout cuts its value for: one past the largest group index.
int64_t groupSizeOf(const ShardLayout &layout) {
  int64_t size = 0;
  for (int64_t index : layout.groupIndex)
    size = std::max(size, index + 1);
  return size;
}

} // namespace

std::string zero::rt::checkCheckpointValue(const CheckpointValue &value,
                                           int64_t worldSize) {
  if (value.name.empty() || value.name[0] == '.' ||
      value.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                                   "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") !=
          std::string::npos)
    return "its name is not a file name";
  if (getElementBytes(value.dtype) == 0)
    return "unknown dtype '" + value.dtype + "'";
  for (int64_t d : value.shape)
    if (d < 0 || d > (int64_t(1) << 40))
      return "bad shape " + formatShape(value.shape);
  if (!value.shard)
    return "";
  const ShardLayout &layout = *value.shard;
  if (static_cast<int64_t>(layout.groupIndex.size()) != worldSize)
    return "its group_index has " + std::to_string(layout.groupIndex.size()) +
           " entries, the world " + std::to_string(worldSize) + " ranks";
  int64_t parts = 0;
  for (int64_t index : layout.groupIndex) {
    if (index < 0 || index >= worldSize)
      return "group index " + std::to_string(index) + " out of range";
    parts = std::max(parts, index + 1);
  }
  int64_t elements = getNumElements(value.shape);
  if (layout.shardElements < 1 || layout.shardElements > (int64_t(1) << 40) ||
      layout.shardElements * parts < elements)
    return std::to_string(parts) + " parts of " +
           std::to_string(layout.shardElements) + " elements do not hold " +
           std::to_string(elements);
  for (int64_t part = 0; part * layout.shardElements < elements; ++part)
    if (std::find(layout.groupIndex.begin(), layout.groupIndex.end(), part) ==
        layout.groupIndex.end())
      return "no rank holds part " + std::to_string(part);
  return "";
}

namespace {

std::string rankDir(const std::string &stepDir, int32_t rank) {
  return stepDir + "/rank" + std::to_string(rank);
}

} // namespace

std::string zero::rt::writeCheckpointFile(const std::string &stepDir,
                                          int32_t rank,
                                          const CheckpointValue &value,
                                          const Array &array,
                                          CheckpointFile &entry) {
  std::string dir = rankDir(stepDir, rank);
  if (std::string error = makeDirectories(dir); !error.empty())
    return error;
  entry.file = value.name + ".npy";
  std::string path = dir + "/" + entry.file;
  if (std::string error = writeNpyAtomically(path, array); !error.empty())
    return error;
  std::error_code ec;
  entry.bytes = static_cast<int64_t>(std::filesystem::file_size(path, ec));
  if (ec)
    return "cannot read " + path + ": " + ec.message();
  entry.fnv1a64 = fnv1a64(array.bytes);
  return "";
}

std::string
zero::rt::writeRankManifest(const std::string &stepDir, int32_t rank,
                            const std::vector<CheckpointFile> &files) {
  std::string manifest =
      "{\"rank\": " + std::to_string(rank) + ", \"files\": [";
  for (size_t i = 0; i < files.size(); ++i)
    manifest += std::string(i ? ",\n  " : "\n  ") +
                "{\"file\": " + jsonString(files[i].file) +
                ", \"bytes\": " + std::to_string(files[i].bytes) +
                ", \"fnv1a64\": \"" + files[i].fnv1a64 + "\"}";
  manifest += "]}\n";
  return writeFileAtomically(rankDir(stepDir, rank) + "/manifest.json",
                             manifest);
}

std::string
zero::rt::writeRankCheckpoint(const std::string &stepDir, int32_t rank,
                              const std::vector<CheckpointValue> &layout,
                              const std::vector<Array> &values) {
  std::vector<CheckpointFile> files(layout.size());
  for (size_t i = 0; i < layout.size(); ++i)
    if (std::string error =
            writeCheckpointFile(stepDir, rank, layout[i], values[i], files[i]);
        !error.empty())
      return error;
  return writeRankManifest(stepDir, rank, files);
}

std::string
zero::rt::writeCheckpointManifest(const std::string &dir,
                                  const CheckpointManifest &manifest) {
  std::string name = checkpointStepName(manifest.steps);
  std::string text = "{\"format\": \"zero-checkpoint\", \"version\": 1,\n"
                     " \"entry\": " +
                     jsonString(manifest.entry) +
                     ", \"world_size\": " + std::to_string(manifest.worldSize) +
                     ", \"steps\": " + std::to_string(manifest.steps) +
                     ",\n \"values\": [";
  for (size_t i = 0; i < manifest.values.size(); ++i) {
    const CheckpointValue &v = manifest.values[i];
    text += std::string(i ? ",\n  " : "\n  ") +
            "{\"argument\": " + std::to_string(v.argument) +
            ", \"name\": " + jsonString(v.name) +
            ", \"dtype\": " + jsonString(v.dtype) +
            ", \"shape\": " + jsonIntegers(v.shape) + ", \"shard\": ";
    if (v.shard)
      text += "{\"shard_elements\": " + std::to_string(v.shard->shardElements) +
              ", \"padded_elements\": " +
              std::to_string(v.shard->shardElements * groupSizeOf(*v.shard)) +
              ", \"group_index\": " + jsonIntegers(v.shard->groupIndex) + "}";
    else
      text += "null";
    if (v.startsAtZero)
      text += ", \"starts_at_zero\": true";
    text += "}";
  }
  text += "]}\n";
  if (std::string error =
          writeFileAtomically(dir + "/" + name + "/manifest.json", text);
      !error.empty())
    return error;
  return writeFileAtomically(dir + "/latest", name + "\n");
}

std::string zero::rt::readCheckpointManifest(const std::string &dir,
                                             CheckpointManifest &manifest,
                                             std::string &stepDir) {
  std::string latest;
  stepDir = dir;
  if (readFile(dir + "/latest", latest).empty()) {
    while (!latest.empty() && (latest.back() == '\n' || latest.back() == ' '))
      latest.pop_back();
    if (latest.empty() || latest.find('/') != std::string::npos)
      return "checkpoint " + dir + ": 'latest' names no checkpoint";
    stepDir = dir + "/" + latest;
  }
  std::string text;
  if (std::string error = readFile(stepDir + "/manifest.json", text);
      !error.empty())
    return stepDir == dir ? "no checkpoint in " + dir + " (neither " + dir +
                                "/latest nor " + dir + "/manifest.json)"
                          : "checkpoint " + dir + ": 'latest' names " +
                                stepDir + ", which has no manifest.json";
  Json root;
  if (std::string error = JsonReader(text).read(root); !error.empty())
    return "checkpoint " + stepDir + "/manifest.json is not JSON (" + error +
           ")";
  if (root.kind != Json::Object ||
      stringOf(root, "format") != "zero-checkpoint")
    return "checkpoint " + stepDir + "/manifest.json is not a zero checkpoint";
  if (integerOf(root, "version") != 1)
    return "checkpoint " + stepDir + ": unsupported version";
  manifest.entry = stringOf(root, "entry");
  manifest.worldSize = integerOf(root, "world_size");
  manifest.steps = integerOf(root, "steps");
  manifest.values.clear();
  const Json *values = root.get("values");
  if (!values || values->kind != Json::List || manifest.worldSize < 1 ||
      manifest.worldSize > (1 << 20) || manifest.steps < 0)
    return "checkpoint " + stepDir +
           "/manifest.json lacks its values, "
           "world_size or steps";
  for (const Json &item : values->list) {
    CheckpointValue value;
    value.argument =
        static_cast<size_t>(std::max<int64_t>(integerOf(item, "argument"), 0));
    value.name = stringOf(item, "name");
    value.dtype = stringOf(item, "dtype");
    value.shape = integersOf(item.get("shape"));
    if (const Json *shard = item.get("shard");
        shard && shard->kind == Json::Object) {
      ShardLayout layout;
      layout.whole = value.shape;
      layout.shardElements = integerOf(*shard, "shard_elements");
      layout.groupIndex = integersOf(shard->get("group_index"));
      value.shard = layout;
    }
    if (const Json *zeros = item.get("starts_at_zero"))
      value.startsAtZero = zeros->kind == Json::Bool && zeros->boolean;
    if (std::string error = checkCheckpointValue(value, manifest.worldSize);
        !error.empty())
      return "checkpoint " + stepDir + "/manifest.json: value " +
             std::to_string(manifest.values.size()) + " (" + value.name +
             "): " + error;
    manifest.values.push_back(std::move(value));
  }
  return "";
}

std::string
zero::rt::checkSameState(const std::vector<CheckpointValue> &saved,
                         const std::vector<CheckpointValue> &expected,
                         bool acrossWorlds) {
  if (saved.size() != expected.size())
    return "the checkpoint holds " + std::to_string(saved.size()) +
           " state values, the program has " + std::to_string(expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const CheckpointValue &have = saved[i];
    const CheckpointValue &want = expected[i];
    std::string what = "state value " + want.name + " (argument " +
                       std::to_string(want.argument) + ")";
    if (have.argument != want.argument || have.name != want.name)
      return what + ": the checkpoint has " + have.name + " (argument " +
             std::to_string(have.argument) + ") in its place";
    if (have.dtype != want.dtype)
      return what + ": the checkpoint's is " + have.dtype + ", the " +
             "program's " + want.dtype;
    if (have.startsAtZero != want.startsAtZero)
      return what + ": " +
             (have.startsAtZero ? "a residual that starts at zero in the "
                                  "checkpoint, other state in the program"
                                : "other state in the checkpoint, a residual "
                                  "that starts at zero in the program");
    // A residual's shape follows the world: a reshard starts it afresh.
    if (have.shape != want.shape && !(acrossWorlds && want.startsAtZero))
      return what + ": the checkpoint's shape is " + formatShape(have.shape) +
             ", the program's " + formatShape(want.shape);
  }
  return "";
}

std::string
zero::rt::checkCheckpoint(const CheckpointManifest &manifest,
                          const std::vector<CheckpointValue> &expected,
                          int64_t worldSize) {
  if (manifest.worldSize != worldSize)
    return "the checkpoint was saved on " + std::to_string(manifest.worldSize) +
           " ranks, this world has " + std::to_string(worldSize) +
           " (zero-reshard turns it into one for this world)";
  if (std::string error = checkSameState(manifest.values, expected);
      !error.empty())
    return error;
  for (size_t i = 0; i < expected.size(); ++i) {
    const CheckpointValue &saved = manifest.values[i];
    const CheckpointValue &want = expected[i];
    std::string what = "state value " + want.name + " (argument " +
                       std::to_string(want.argument) + ")";
    if (saved.shard.has_value() != want.shard.has_value())
      return what + ": " +
             (saved.shard ? "sharded in the checkpoint, whole in the program"
                          : "whole in the checkpoint, sharded in the program") +
             " (zero-reshard turns it into the program's layout)";
    if (want.shard &&
        (saved.shard->shardElements != want.shard->shardElements ||
         saved.shard->groupIndex != want.shard->groupIndex))
      return what + ": shards of " +
             std::to_string(saved.shard->shardElements) +
             " elements in the checkpoint, of " +
             std::to_string(want.shard->shardElements) +
             " in the program, or in another order (zero-reshard turns it "
             "into the program's layout)";
  }
  return "";
}

std::string zero::rt::readRankManifest(const std::string &stepDir, int32_t rank,
                                       const CheckpointManifest &manifest,
                                       std::vector<CheckpointFile> &files) {
  std::string dir = rankDir(stepDir, rank);
  std::string text;
  if (std::string error = readFile(dir + "/manifest.json", text);
      !error.empty())
    return "checkpoint " + stepDir + " is incomplete: rank " +
           std::to_string(rank) + " has no manifest";
  Json root;
  if (std::string error = JsonReader(text).read(root); !error.empty())
    return dir + "/manifest.json is not JSON (" + error + ")";
  const Json *list = root.get("files");
  if (!list || list->kind != Json::List ||
      list->list.size() != manifest.values.size())
    return dir + "/manifest.json does not list the checkpoint's values";
  files.clear();
  for (size_t i = 0; i < manifest.values.size(); ++i) {
    const Json &entry = list->list[i];
    CheckpointFile file{stringOf(entry, "file"), integerOf(entry, "bytes"),
                        stringOf(entry, "fnv1a64")};
    if (file.file != manifest.values[i].name + ".npy")
      return dir + "/manifest.json: entry " + std::to_string(i) + " is not " +
             manifest.values[i].name + ".npy";
    files.push_back(std::move(file));
  }
  return "";
}

std::string zero::rt::readCheckpointFile(const std::string &stepDir,
                                         int32_t rank,
                                         const CheckpointValue &value,
                                         const CheckpointFile &file,
                                         Array &array) {
  std::string path = rankDir(stepDir, rank) + "/" + file.file;
  std::error_code ec;
  uintmax_t bytes = std::filesystem::file_size(path, ec);
  if (ec)
    return "checkpoint " + stepDir + ": cannot read " + path + ": " +
           ec.message();
  array = Array{value.dtype, value.getRankShape(), {}};
  std::string error = readNpy(path, array);
  if (error.empty() && (static_cast<int64_t>(bytes) != file.bytes ||
                        fnv1a64(array.bytes) != file.fnv1a64))
    error = path + " does not match its manifest (size or checksum)";
  if (!error.empty())
    return error + ": the file changed after the save";
  return "";
}

std::string zero::rt::readRankCheckpoint(const std::string &stepDir,
                                         int32_t rank,
                                         const CheckpointManifest &manifest,
                                         std::vector<Array> &values) {
  std::vector<CheckpointFile> files;
  if (std::string error = readRankManifest(stepDir, rank, manifest, files);
      !error.empty())
    return error;
  values.assign(manifest.values.size(), Array());
  for (size_t i = 0; i < manifest.values.size(); ++i)
    if (std::string error = readCheckpointFile(
            stepDir, rank, manifest.values[i], files[i], values[i]);
        !error.empty())
      return error;
  return "";
}

/// Reads value `index` of `manifest` whole: each part from the first rank
/// that holds it.
static std::string
readWholeValue(const std::string &stepDir, const CheckpointManifest &manifest,
               const std::vector<std::vector<CheckpointFile>> &rankFiles,
               size_t index, Array &whole) {
  const CheckpointValue &value = manifest.values[index];
  if (!value.shard)
    return readCheckpointFile(stepDir, 0, value, rankFiles[0][index], whole);
  const ShardLayout &layout = *value.shard;
  int64_t elementBytes = getElementBytes(value.dtype);
  int64_t elements = getNumElements(value.shape);
  whole =
      Array{value.dtype, value.shape,
            std::vector<char>(static_cast<size_t>(elements * elementBytes))};
  for (int64_t part = 0; part * layout.shardElements < elements; ++part) {
    auto holder =
        std::find(layout.groupIndex.begin(), layout.groupIndex.end(), part);
    int32_t rank = static_cast<int32_t>(holder - layout.groupIndex.begin());
    Array shard;
    if (std::string error = readCheckpointFile(stepDir, rank, value,
                                               rankFiles[rank][index], shard);
        !error.empty())
      return error;
    int64_t first = part * layout.shardElements;
    int64_t count = std::min(layout.shardElements, elements - first);
    std::memcpy(whole.bytes.data() + first * elementBytes, shard.bytes.data(),
                static_cast<size_t>(count * elementBytes));
  }
  return "";
}

/// Every rank's file list.
static std::string
readAllRankManifests(const std::string &stepDir,
                     const CheckpointManifest &manifest,
                     std::vector<std::vector<CheckpointFile>> &rankFiles) {
  rankFiles.assign(static_cast<size_t>(manifest.worldSize), {});
  for (int32_t rank = 0; rank < manifest.worldSize; ++rank)
    if (std::string error =
            readRankManifest(stepDir, rank, manifest, rankFiles[rank]);
        !error.empty())
      return error;
  return "";
}

/// Hands `take` each value of `manifest` whole, one at a time, so that
/// memory holds about one value; `largestBytes` gets the largest value's
/// bytes.
static std::string forEachWholeValue(
    const std::string &stepDir, const CheckpointManifest &manifest,
    int64_t &largestBytes,
    const std::function<std::string(size_t, const Array &)> &take) {
  std::vector<std::vector<CheckpointFile>> rankFiles;
  if (std::string error = readAllRankManifests(stepDir, manifest, rankFiles);
      !error.empty())
    return error;
  largestBytes = 0;
  for (size_t i = 0; i < manifest.values.size(); ++i) {
    Array whole;
    if (std::string error =
            readWholeValue(stepDir, manifest, rankFiles, i, whole);
        !error.empty())
      return error;
    largestBytes =
        std::max(largestBytes, static_cast<int64_t>(whole.bytes.size()));
    if (std::string error = take(i, whole); !error.empty())
      return error;
  }
  return "";
}

std::string zero::rt::reshardCheckpoint(const std::string &stepDir,
                                        const CheckpointManifest &manifest,
                                        const std::string &dir,
                                        const CheckpointManifest &target,
                                        int64_t &largestBytes) {
  if (std::string error = checkSameState(manifest.values, target.values,
                                         /*acrossWorlds=*/true);
      !error.empty())
    return error;
  std::string targetDir = dir + "/" + checkpointStepName(target.steps);
  std::vector<std::vector<CheckpointFile>> written(
      static_cast<size_t>(target.worldSize));
  auto cut = [&](size_t i, const Array &whole) -> std::string {
    const CheckpointValue &value = target.values[i];
    Array zeros;
    if (value.startsAtZero) {
      zeros = Array{value.dtype, value.getRankShape(), {}};
      zeros.bytes.assign(
          getNumElements(zeros.shape) * getElementBytes(value.dtype), 0);
    }
    for (int32_t rank = 0; rank < target.worldSize; ++rank) {
      CheckpointFile file;
      std::string error =
          value.startsAtZero
              ? writeCheckpointFile(targetDir, rank, value, zeros, file)
          : value.shard
              ? writeCheckpointFile(targetDir, rank, value,
                                    takeShard(whole, value.shard->shardElements,
                                              value.shard->groupIndex[rank]),
                                    file)
              : writeCheckpointFile(targetDir, rank, value, whole, file);
      if (!error.empty())
        return error;
      written[rank].push_back(std::move(file));
    }
    return "";
  };
  if (std::string error =
          forEachWholeValue(stepDir, manifest, largestBytes, cut);
      !error.empty())
    return error;
  for (int32_t rank = 0; rank < target.worldSize; ++rank)
    if (std::string error = writeRankManifest(targetDir, rank, written[rank]);
        !error.empty())
      return error;
  return writeCheckpointManifest(dir, target);
}

std::string zero::rt::consolidateCheckpoint(const std::string &stepDir,
                                            const CheckpointManifest &manifest,
                                            const std::string &dir,
                                            int64_t &largestBytes) {
  // The directory is made once a value has been read: a checkpoint that
  // cannot be read leaves nothing behind.
  return forEachWholeValue(
      stepDir, manifest, largestBytes,
      [&](size_t i, const Array &whole) -> std::string {
        if (std::string error = makeDirectories(dir); !error.empty())
          return error;
        return writeNpyAtomically(dir + "/" + manifest.values[i].name + ".npy",
                                  whole);
      });
}

std::vector<CheckpointValue>
zero::rt::cutForWorld(const std::vector<CheckpointValue> &values,
                      int64_t worldSize) {
  std::vector<CheckpointValue> cut = values;
  for (CheckpointValue &value : cut) {
    if (!value.shard)
      continue;
    // A residual keeps a row a rank, of the length it had.
    if (value.startsAtZero && !value.shape.empty())
      value.shape[0] = worldSize;
    int64_t elements = getNumElements(value.shape);
    value.shard->whole = value.shape;
    value.shard->shardElements =
        std::max<int64_t>(1, (elements + worldSize - 1) / worldSize);
    value.shard->groupIndex.clear();
    for (int64_t rank = 0; rank < worldSize; ++rank)
      value.shard->groupIndex.push_back(rank);
  }
  return cut;
}
