// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/detect/detections_json.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <ctime>
#include <iterator>

#include "pipeline/error.hpp"

namespace starsift {

namespace {

// The shortest text that reads back as the same float; null for non-finite values (JSON has
// no NaN).
void put(std::string& s, float v) {
  if (!std::isfinite(v)) {
    s += "null";
    return;
  }
  char buffer[32];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, v).ptr;
  s.append(buffer, end);
}

template <class Int>
void put_int(std::string& s, Int v) {
  char buffer[24];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, v).ptr;
  s.append(buffer, end);
}

void field(std::string& s, const char* name) {
  if (s.back() != '{') s += ',';
  s += '"';
  s += name;
  s += "\":";
}

void put_object(std::string& s, const DetectedObject& o) {
  s += '{';
  field(s, "id"), put_int(s, o.id);
  field(s, "npix"), put_int(s, o.npix);
  field(s, "x"), put(s, o.x);
  field(s, "y"), put(s, o.y);
  field(s, "x_err"), put(s, o.x_err);
  field(s, "y_err"), put(s, o.y_err);
  field(s, "flux"), put(s, o.flux);
  field(s, "flux_err"), put(s, o.flux_err);
  field(s, "peak"), put(s, o.peak);
  field(s, "xpeak"), put_int(s, o.xpeak);
  field(s, "ypeak"), put_int(s, o.ypeak);
  field(s, "bbox");
  s += '[';
  put_int(s, o.xmin), s += ',', put_int(s, o.ymin), s += ',';
  put_int(s, o.xmax), s += ',', put_int(s, o.ymax);
  s += ']';
  field(s, "x2"), put(s, o.x2);
  field(s, "y2"), put(s, o.y2);
  field(s, "xy"), put(s, o.xy);
  field(s, "a"), put(s, o.a);
  field(s, "b"), put(s, o.b);
  field(s, "theta"), put(s, o.theta);
  field(s, "elongation"), put(s, o.elongation);
  field(s, "length"), put(s, o.length);
  field(s, "start");
  s += '[', put(s, o.x_start), s += ',', put(s, o.y_start), s += ']';
  field(s, "end");
  s += '[', put(s, o.x_end), s += ',', put(s, o.y_end), s += ']';
  field(s, "flags"), put_int(s, o.flags);
  field(s, "track"), put_int(s, o.track);
  s += '}';
}

void put_track(std::string& s, const Track& t) {
  s += '{';
  field(s, "id"), put_int(s, t.id);
  field(s, "state");
  s += '"';
  s += to_string(t.state);
  s += '"';
  field(s, "x"), put(s, t.x);
  field(s, "y"), put(s, t.y);
  field(s, "vx"), put(s, t.vx);
  field(s, "vy"), put(s, t.vy);
  field(s, "vx_s"), put(s, t.vx_s);
  field(s, "vy_s"), put(s, t.vy_s);
  field(s, "detections"), put_int(s, t.detections);
  field(s, "missed"), put_int(s, t.missed);
  field(s, "mean_flux"), put(s, t.mean_flux);
  field(s, "first_frame"), put_int(s, t.first_frame);
  field(s, "detection"), put_int(s, t.detection);
  s += '}';
}

// "[a,b,...]": each element written by `put_one`.
template <class Items, class PutOne>
void put_array(std::string& s, const Items& items, PutOne put_one) {
  s += '[';
  for (std::size_t i = 0; i < std::size(items); ++i) {
    if (i > 0) s += ',';
    put_one(s, items[i]);
  }
  s += ']';
}

// The pattern's expansion for `utc_us` into `out` (reusing its memory).
void expand(const std::string& pattern, std::int64_t utc_us, std::string& out) {
  const std::time_t seconds = static_cast<std::time_t>(utc_us / 1000000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buffer[4096];
  const std::size_t n = std::strftime(buffer, sizeof buffer, pattern.c_str(), &tm);
  if (n == 0 && !pattern.empty()) {
    out.assign(pattern);  // too long to expand: taken as written
  } else {
    out.assign(buffer, n);
  }
}

// "2026-11-25T01:30:00.123456Z" appended to `s`.
void append_utc(std::string& s, std::int64_t utc_us) {
  const std::time_t seconds = static_cast<std::time_t>(utc_us / 1000000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buffer[64];
  std::size_t n = std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%S", &tm);
  n += static_cast<std::size_t>(
      std::snprintf(buffer + n, sizeof buffer - n, ".%06dZ", static_cast<int>(utc_us % 1000000)));
  s.append(buffer, n);
}

}  // namespace

std::string utc_text(std::int64_t utc_us) {
  std::string text;
  append_utc(text, utc_us);
  return text;
}

void append_detections_json(std::string& s, const FrameDetections& f) {
  s += '{';
  field(s, "frame"), put_int(s, f.frame);
  field(s, "pts_ns");
  if (f.pts_ns < 0) {
    s += "null";
  } else {
    put_int(s, f.pts_ns);
  }
  field(s, "utc");
  s += '"';
  append_utc(s, f.utc_us);
  s += '"';
  field(s, "overflow"), put_int(s, f.overflow);
  field(s, "objects");
  put_array(s, f.objects, put_object);
  field(s, "tracks");
  put_array(s, f.tracks, put_track);
  s += "}\n";
}

DetectionsWriter::DetectionsWriter(std::string pattern, std::uint64_t max_bytes)
    : pattern_(std::move(pattern)), max_bytes_(max_bytes) {
  if (pattern_.empty()) throw Error("detections file: an empty path", "a file path");
}

DetectionsWriter::~DetectionsWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void DetectionsWriter::open_for(const std::string& name) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  path_ = part_ == 0 ? name : name + "." + std::to_string(part_);
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    const int reason = errno;
    throw Error("detections file " + shown_value(path_) +
                ": cannot open: " + std::strerror(reason));
  }
  struct stat st {};
  bytes_ = ::fstat(fd_, &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
  name_ = name;
}

void DetectionsWriter::write(const FrameDetections& frame) {
  line_.clear();
  append_detections_json(line_, frame);
  expand(pattern_, frame.utc_us, expanded_);
  if (fd_ < 0 || expanded_ != name_) {
    part_ = 0;
    open_for(expanded_);
  }
  while (max_bytes_ > 0 && bytes_ > 0 && bytes_ + line_.size() > max_bytes_) {
    ++part_;
    open_for(expanded_);
  }
  const ssize_t written = ::write(fd_, line_.data(), line_.size());
  if (written != static_cast<ssize_t>(line_.size())) {
    const int reason = written < 0 ? errno : ENOSPC;
    // A short write leaves part of a line: cut it off again, so the file ends on a newline.
    if (written > 0) {
      if (::ftruncate(fd_, static_cast<off_t>(bytes_)) != 0) {
        // Nothing more can be done; the error below says why the line is missing.
      }
    }
    throw Error("detections file " + shown_value(path_) +
                ": cannot write: " + std::strerror(reason));
  }
  bytes_ += line_.size();
  ++lines_;
}

}  // namespace starsift
