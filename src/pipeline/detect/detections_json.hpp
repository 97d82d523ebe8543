// SPDX-License-Identifier: LGPL-2.1-or-later
// Detections as JSON lines: one line per frame, the schema documented in docs/detect.md
// ("JSON lines"). The writer keeps a file per night or per size: the path is a strftime(3)
// pattern in UTC (a new file whenever the expanded name changes, e.g. detections-%Y%m%d.jsonl),
// and a file that would exceed `max_bytes` continues in <name>.1, <name>.2, ... Each line is
// written whole with one write(2) or not at all, so a full disk never leaves half a line.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "pipeline/detect/catalogue.hpp"
#include "pipeline/detect/tracker.hpp"

namespace starsift {

struct FrameDetections {
  std::uint64_t frame = 0;
  std::int64_t pts_ns = -1;  // -1: the frame had none
  std::int64_t utc_us = 0;   // microseconds since 1970-01-01 UTC
  std::span<const DetectedObject> objects;
  std::uint32_t overflow = 0;  // objects the catalogue had no room for
  std::span<const Track> tracks;
};

// Appends one JSON object and a newline to `line`.
void append_detections_json(std::string& line, const FrameDetections& frame);

// "2026-11-25T01:30:00.123456Z"
std::string utc_text(std::int64_t utc_us);

class DetectionsWriter {
 public:
  // `pattern`: the path, a strftime pattern in UTC. `max_bytes`: 0 for no limit.
  DetectionsWriter(std::string pattern, std::uint64_t max_bytes);
  ~DetectionsWriter();
  DetectionsWriter(const DetectionsWriter&) = delete;
  DetectionsWriter& operator=(const DetectionsWriter&) = delete;

  // Writes the frame's line. Throws Error naming the file and the reason when it cannot (the
  // line is then not in the file at all).
  void write(const FrameDetections& frame);

  const std::string& path() const noexcept { return path_; }  // the file written last
  std::uint64_t lines() const noexcept { return lines_; }

 private:
  void open_for(const std::string& name);

  std::string pattern_;
  std::uint64_t max_bytes_;
  std::string name_;  // the pattern's expansion the open file belongs to
  std::string path_;  // the open file: name_ or name_.N
  int part_ = 0;
  int fd_ = -1;
  std::uint64_t bytes_ = 0;
  std::uint64_t lines_ = 0;
  std::string line_;      // reused: no allocation per frame once grown
  std::string expanded_;  // the pattern's expansion for the frame being written
};

}  // namespace starsift
