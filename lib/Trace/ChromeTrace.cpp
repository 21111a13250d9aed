//===- ChromeTrace.cpp - reading the traces zero-run writes ---------------===//

#include "zero/Trace/ChromeTrace.h"
#include "zero/runtime/zero_runtime.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>

using namespace zero::trace;

std::string zero::trace::readChromeTrace(llvm::StringRef path,
                                         std::map<int64_t, RankTracks> &ranks) {
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(path);
  if (!buffer)
    return (path + ": " + buffer.getError().message()).str();
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return (path + ": not JSON: " + llvm::toString(json.takeError())).str();
  const llvm::json::Object *root = json->getAsObject();
  const llvm::json::Array *events =
      root ? root->getArray("traceEvents") : nullptr;
  if (!events)
    return (path + ": no \"traceEvents\" array (not a Chrome trace)").str();
  for (const llvm::json::Value &value : *events) {
    const llvm::json::Object *event = value.getAsObject();
    if (!event)
      continue;
    int64_t pid = event->getInteger("pid").value_or(0);
    llvm::StringRef phase = event->getString("ph").value_or("");
    llvm::StringRef name = event->getString("name").value_or("");
    RankTracks &rank = ranks[pid];
    if (rank.label.empty())
      rank.label = "rank " + std::to_string(pid);
    if (phase == "M" && name == "process_name") {
      if (const llvm::json::Object *args = event->getObject("args"))
        if (std::optional<llvm::StringRef> label = args->getString("name"))
          rank.label = label->str();
      continue;
    }
    if (phase != "X")
      continue;
    double begin = event->getNumber("ts").value_or(0) * 1e-6;
    double end = begin + event->getNumber("dur").value_or(0) * 1e-6;
    Span span{begin, end, name.str()};
    if (event->getInteger("tid").value_or(ZERO_TRACK_COMPUTE) ==
        ZERO_TRACK_COMMUNICATION)
      rank.communication.push_back(span);
    else
      rank.compute.push_back(span);
  }
  return "";
}

Overlap
zero::trace::measureOverlap(const std::map<int64_t, RankTracks> &ranks) {
  Overlap overlap;
  int communicating = 0;
  for (const auto &[pid, rank] : ranks) {
    communicating += !rank.communication.empty();
    for (const Span &collective : rank.communication) {
      overlap.communication += collective.end - collective.begin;
      for (const Span &compute : rank.compute)
        if (compute.name == "compute")
          overlap.hidden +=
              std::max(0.0, std::min(collective.end, compute.end) -
                                std::max(collective.begin, compute.begin));
    }
  }
  overlap.ranks = std::max(1, communicating);
  return overlap;
}
