// SPDX-License-Identifier: LGPL-2.1-or-later
// A pipeline's detections as JSON lines, one file per night: <night dir>/detections.jsonl.
//
// Each line is siftdetect's record of one frame (append_detections_json(), docs/detect.md
// "JSON lines") with two fields added at its end: "fps", the measured frame rate, and "clock",
// the host clock's state (append_clock_json()) — in every line rather than in a header, so each
// line stands alone (grep, tail -f, a file cut anywhere) and a change of the clock's state shows
// at the frame it happened (docs/outputs.md). A frame of a new night opens that night's file; a
// restart appends to the file it finds. Lines are written whole (LineFile): a crash of the
// process loses none of those written, and fdatasync(2) at most `sync_interval` apart bounds
// what a power cut can lose.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "daemon/outputs/clock_state.hpp"
#include "daemon/outputs/line_file.hpp"
#include "daemon/outputs/night_layout.hpp"
#include "pipeline/detect/detections_json.hpp"

namespace starsift::daemon {

struct DetectionsFileOptions {
  // fdatasync(2) when this long has passed since the last (checked at each line), at a night's
  // change and at close. 0: after every line (slow on SD cards and eMMC).
  std::chrono::milliseconds sync_interval{1000};
};

// Appends siftdetect's line for `frame` plus "fps" (rounded to 0.001; null when not finite or
// not positive) and "clock" to `line`.
void append_detections_line(std::string& line, const FrameDetections& frame, double fps,
                            const ClockState& clock);

class DetectionsFile {
 public:
  static constexpr const char* kFileName = "detections.jsonl";

  DetectionsFile(NightLayout layout, std::string pipeline, DetectionsFileOptions options = {});
  ~DetectionsFile();  // syncs; an error there is logged, not thrown
  DetectionsFile(const DetectionsFile&) = delete;
  DetectionsFile& operator=(const DetectionsFile&) = delete;

  // Writes the frame's line into the file of the night that holds frame.utc_us. Throws Error
  // naming the file and the reason (the line is then not in the file at all); the next call
  // tries again.
  void write(const FrameDetections& frame, double fps, const ClockState& clock);
  // fdatasync(2) now (end of stream, shutdown). Throws Error naming the file.
  void sync();

  const std::filesystem::path& path() const noexcept;  // the open file; empty before the first
  const std::string& night() const noexcept { return night_; }
  std::uint64_t lines() const noexcept { return lines_; }  // written by this object
  std::uint64_t syncs() const noexcept { return syncs_; }

 private:
  void open_night(const std::string& night);

  NightLayout layout_;
  std::string pipeline_;
  DetectionsFileOptions options_;
  std::unique_ptr<LineFile> file_;
  std::string night_;  // the night of the open file
  std::string line_;   // reused: no allocation per frame once grown
  std::uint64_t lines_ = 0;
  std::uint64_t syncs_ = 0;
  std::chrono::steady_clock::time_point last_sync_{};
  bool dirty_ = false;  // lines written since the last sync
};

}  // namespace starsift::daemon
