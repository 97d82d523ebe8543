// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/outputs/detections_file.hpp"

#include <spdlog/spdlog.h>

#include <charconv>
#include <cmath>
#include <utility>

namespace starsift::daemon {

void append_detections_line(std::string& line, const FrameDetections& frame, double fps,
                            const ClockState& clock) {
  append_detections_json(line, frame);
  // siftdetect's record ends with "}\n": the added fields go inside that object.
  line.resize(line.size() - 2);
  line += ",\"fps\":";
  if (std::isfinite(fps) && fps > 0.0) {
    char buffer[32];
    const double rounded = std::round(fps * 1000.0) / 1000.0;
    line.append(buffer, std::to_chars(buffer, buffer + sizeof buffer, rounded).ptr);
  } else {
    line += "null";
  }
  line += ",\"clock\":";
  append_clock_json(line, clock);
  line += "}\n";
}

DetectionsFile::DetectionsFile(NightLayout layout, std::string pipeline,
                               DetectionsFileOptions options)
    : layout_(std::move(layout)), pipeline_(std::move(pipeline)), options_(options) {
  check_pipeline_name(pipeline_);
}

DetectionsFile::~DetectionsFile() {
  try {
    sync();
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
  }
}

const std::filesystem::path& DetectionsFile::path() const noexcept {
  static const std::filesystem::path none;
  return file_ ? file_->path() : none;
}

void DetectionsFile::open_night(const std::string& night) {
  if (file_) {
    sync();  // the night that ends is complete on disk
    file_.reset();
  }
  const std::filesystem::path dir = layout_.ensure_night_dir(pipeline_, night);
  file_ = std::make_unique<LineFile>(dir / kFileName);
  night_ = night;
  if (file_->repaired_bytes() > 0) {
    spdlog::warn("detections file {}: cut off a torn last line of {} bytes (a power cut?)",
                 file_->path().string(), file_->repaired_bytes());
  }
}

void DetectionsFile::write(const FrameDetections& frame, double fps, const ClockState& clock) {
  line_.clear();
  append_detections_line(line_, frame, fps, clock);
  const std::string night = layout_.night_of(frame.utc_us);
  if (!file_ || night != night_) open_night(night);
  file_->append(line_);
  ++lines_;
  dirty_ = true;
  const auto now = std::chrono::steady_clock::now();
  if (options_.sync_interval.count() <= 0 || now - last_sync_ >= options_.sync_interval) sync();
}

void DetectionsFile::sync() {
  if (!file_ || !dirty_) return;
  file_->sync();
  dirty_ = false;
  ++syncs_;
  last_sync_ = std::chrono::steady_clock::now();
}

}  // namespace starsift::daemon
