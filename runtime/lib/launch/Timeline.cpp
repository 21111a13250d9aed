//===- Timeline.cpp - a rank's trace, and the trace file ------------------===//

#include "launch/Timeline.h"
#include "io/Json.h"

#include <algorithm>
#include <cstdio>
#include <fstream>

using namespace zero::rt;

void Timeline::begin(double time) {
  recorded.clear();
  resumed = time;
}

void Timeline::computeUntil(double until) {
  if (until > resumed)
    recorded.push_back({ZERO_TRACK_COMPUTE, "compute", resumed, until});
}

void Timeline::started(const std::string &name, double called,
                       double returned) {
  computeUntil(called);
  if (returned > called)
    recorded.push_back({ZERO_TRACK_COMPUTE, "start " + name, called, returned});
  resumed = returned;
}

void Timeline::waited(const std::string &name, double called, double returned,
                      double began, double finished, uint64_t bytes,
                      const std::string &label) {
  computeUntil(called);
  if (returned > called)
    recorded.push_back({ZERO_TRACK_COMPUTE, "wait " + name, called, returned});
  std::string span = name;
  if (!label.empty())
    span += ", " + label;
  span += ", " + std::to_string(bytes) + " B";
  recorded.push_back(
      {ZERO_TRACK_COMMUNICATION, span, began, finished, bytes, label});
  resumed = returned;
}

void Timeline::end(double time, std::vector<ComputeSpan> deviceSpans) {
  computeUntil(time);
  resumed = -1;
  if (deviceSpans.empty())
    return;
  recorded.erase(std::remove_if(recorded.begin(), recorded.end(),
                                [](const TraceEvent &event) {
                                  return event.track == ZERO_TRACK_COMPUTE;
                                }),
                 recorded.end());
  for (ComputeSpan &span : deviceSpans)
    if (span.begin >= 0 && span.end >= span.begin)
      recorded.push_back(
          {ZERO_TRACK_COMPUTE, std::move(span.name), span.begin, span.end});
}

bool zero::rt::writeChromeTrace(const std::string &path,
                                const std::vector<RankTimeline> &ranks,
                                double epoch) {
  std::ofstream out(path);
  if (!out)
    return false;
  static const char *tracks[ZERO_NUM_TRACKS] = {"compute", "communication"};
  out << "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  bool first = true;
  auto separator = [&] {
    out << (first ? "" : ",\n");
    first = false;
  };
  char number[64];
  for (const RankTimeline &rank : ranks) {
    separator();
    out << "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": " << rank.rank
        << ", \"args\": {\"name\": \"rank " << rank.rank << "\"}}";
    for (int track = 0; track < ZERO_NUM_TRACKS; ++track) {
      separator();
      out << "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": " << rank.rank
          << ", \"tid\": " << track << ", \"args\": {\"name\": \""
          << tracks[track] << "\"}}";
    }
    for (const TraceEvent &event : rank.timeline->events()) {
      separator();
      std::snprintf(number, sizeof number, "%.3f, \"dur\": %.3f",
                    (event.begin - epoch) * 1e6,
                    (event.end - event.begin) * 1e6);
      out << "{\"ph\": \"X\", \"pid\": " << rank.rank
          << ", \"tid\": " << event.track
          << ", \"name\": " << jsonString(event.name) << ", \"ts\": " << number;
      if (event.track == ZERO_TRACK_COMMUNICATION) {
        out << ", \"args\": {\"bytes\": " << event.bytes;
        if (!event.label.empty())
          out << ", \"bucket\": " << jsonString(event.label);
        out << "}";
      }
      out << "}";
    }
  }
  out << "\n]}\n";
  return static_cast<bool>(out);
}
