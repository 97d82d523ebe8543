// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/detect/tracker.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "pipeline/error.hpp"
#include "pipeline/param_checks.hpp"

namespace starsift {

namespace {

// Least-squares line through (u_i, v_i): the slope and the value at u = 0. With fewer than
// two distinct abscissae the slope is 0 and the value the mean.
struct Line {
  double value;
  double slope;
};

template <class Abscissa, class Ordinate>
Line fit_line(int n, Abscissa u, Ordinate v) {
  double su = 0.0, sv = 0.0;
  for (int i = 0; i < n; ++i) {
    su += u(i);
    sv += v(i);
  }
  const double mu = su / n, mv = sv / n;
  double suu = 0.0, suv = 0.0;
  for (int i = 0; i < n; ++i) {
    const double du = u(i) - mu;
    suu += du * du;
    suv += du * (v(i) - mv);
  }
  // Abscissae closer than this (frames: never; seconds: 1 ns apart) carry no slope.
  if (!(suu > 1e-18)) return {mv, 0.0};
  const double slope = suv / suu;
  return {mv - slope * mu, slope};
}

}  // namespace

std::string_view to_string(TrackState state) noexcept {
  switch (state) {
    case TrackState::Tentative:
      return "tentative";
    case TrackState::Confirmed:
      return "confirmed";
    case TrackState::Coasting:
      return "coasting";
  }
  return "unknown";
}

Tracker::Tracker(const TrackerParams& params) : params_(params) {
  params_.validate();
  const auto capacity = static_cast<std::size_t>(params_.max_tracks);
  slots_.resize(capacity);
  samples_.resize(capacity * static_cast<std::size_t>(params_.fit_window));
  tails_.resize(capacity * static_cast<std::size_t>(params_.tail));
  free_slots_.reserve(capacity);
  live_slots_.reserve(capacity);
  track_linked_.reserve(capacity);
  live_.reserve(capacity);
  reported_.reserve(capacity);
  reported_slots_.reserve(capacity);
  // A few candidate pairs per track and a catalogue as large as the track table cover the
  // usual frame; a larger one grows these once.
  candidates_.reserve(4 * capacity);
  detection_used_.reserve(capacity);
  by_x_.reserve(capacity);
  reset();
}

void Tracker::reset() {
  free_slots_.clear();
  // Taken from the back: slot 0 first, so runs repeat slot for slot.
  for (int s = params_.max_tracks - 1; s >= 0; --s) free_slots_.push_back(s);
  live_slots_.clear();
  live_.clear();
  reported_.clear();
  reported_slots_.clear();
  counters_ = {};
  have_frame_ = false;
  last_frame_ = 0;
}

std::size_t Tracker::capacity_bytes() const noexcept {
  return slots_.capacity() * sizeof(Slot) + samples_.capacity() * sizeof(Sample) +
         tails_.capacity() * sizeof(TrackPoint) + reported_slots_.capacity() * sizeof(int) +
         free_slots_.capacity() * sizeof(int) + live_slots_.capacity() * sizeof(int) +
         candidates_.capacity() * sizeof(Candidate) + track_linked_.capacity() +
         detection_used_.capacity() + live_.capacity() * sizeof(Track) +
         reported_.capacity() * sizeof(Track);
}

Tracker::Sample* Tracker::window(int slot_index) noexcept {
  return samples_.data() +
         static_cast<std::size_t>(slot_index) * static_cast<std::size_t>(params_.fit_window);
}

void Tracker::fit(Slot& slot) const {
  const auto slot_index = static_cast<std::size_t>(&slot - slots_.data());
  const Sample* w = samples_.data() + slot_index * static_cast<std::size_t>(params_.fit_window);
  const int n = slot.window_size;
  const int latest = (slot.window_head + params_.fit_window - 1) % params_.fit_window;
  const std::uint64_t ref_frame = w[latest].frame;
  const std::int64_t ref_time = w[latest].timestamp_ns;
  // Abscissae relative to the latest detection keep the sums small and exact in doubles.
  const auto frames = [&](int i) { return -static_cast<double>(ref_frame - w[i].frame); };
  const auto seconds = [&](int i) {
    return 1e-9 * static_cast<double>(w[i].timestamp_ns - ref_time);
  };
  const auto xs = [&](int i) { return w[i].x; };
  const auto ys = [&](int i) { return w[i].y; };
  const Line x = fit_line(n, frames, xs);
  const Line y = fit_line(n, frames, ys);
  const Line x_s = fit_line(n, seconds, xs);
  const Line y_s = fit_line(n, seconds, ys);
  slot.ref_frame = ref_frame;
  slot.fx = x.value;
  slot.fy = y.value;
  slot.fvx = x.slope;
  slot.fvy = y.slope;
  Track& t = slot.track;
  t.x = static_cast<float>(x.value);
  t.y = static_cast<float>(y.value);
  t.vx = static_cast<float>(x.slope);
  t.vy = static_cast<float>(y.slope);
  t.vx_s = static_cast<float>(x_s.slope);
  t.vy_s = static_cast<float>(y_s.slope);
}

void Tracker::add_detection(Slot& slot, std::uint64_t frame, std::int64_t timestamp_ns,
                            const DetectedObject& detection) {
  const auto slot_index = static_cast<int>(&slot - slots_.data());
  window(slot_index)[slot.window_head] = {frame, timestamp_ns, detection.x, detection.y};
  slot.window_head = (slot.window_head + 1) % params_.fit_window;
  slot.window_size = std::min(slot.window_size + 1, params_.fit_window);
  fit(slot);

  Track& t = slot.track;
  ++t.detections;
  t.missed = 0;
  t.last_frame = frame;
  slot.flux_sum += detection.flux;
  t.mean_flux = static_cast<float>(slot.flux_sum / t.detections);
  if (t.state == TrackState::Tentative) {
    if (t.detections >= static_cast<std::uint32_t>(params_.confirm)) {
      t.state = TrackState::Confirmed;
      ++counters_.tracks_confirmed;
    }
  } else {
    t.state = TrackState::Confirmed;
  }
}

void Tracker::start_track(int detection_index, std::uint64_t frame, std::int64_t timestamp_ns,
                          const DetectedObject& detection) {
  const int s = free_slots_.back();
  free_slots_.pop_back();
  Slot& slot = slots_[static_cast<std::size_t>(s)];
  slot = Slot{};
  slot.track.first_frame = frame;
  slot.track.detection = detection_index;
  add_detection(slot, frame, timestamp_ns, detection);
  live_slots_.push_back(s);
  ++counters_.tracks_started;
}

std::size_t Tracker::tail(std::size_t mover, std::span<TrackPoint> out) const noexcept {
  if (mover >= reported_slots_.size() || params_.tail == 0) return 0;
  const auto s = static_cast<std::size_t>(reported_slots_[mover]);
  const Slot& slot = slots_[s];
  const TrackPoint* ring = tails_.data() + s * static_cast<std::size_t>(params_.tail);
  const std::size_t n = std::min(static_cast<std::size_t>(slot.tail_size), out.size());
  // The latest n, oldest first: they end just before tail_head.
  std::size_t at = static_cast<std::size_t>(slot.tail_head + params_.tail) - n;
  for (std::size_t i = 0; i < n; ++i, ++at)
    out[i] = ring[at % static_cast<std::size_t>(params_.tail)];
  return n;
}

void Tracker::update(std::uint64_t frame, std::int64_t timestamp_ns,
                     std::span<DetectedObject> detections) {
  if (have_frame_ && frame <= last_frame_) {
    throw Error(
        "tracker frame " + std::to_string(frame) + " does not come after frame " +
            std::to_string(last_frame_),
        "frame numbers above " + std::to_string(last_frame_) + ", or reset() to start again");
  }
  ++counters_.frames;
  counters_.detections += detections.size();

  const int n_detections = static_cast<int>(detections.size());
  detection_used_.assign(detections.size(), 0);
  for (int j = 0; j < n_detections; ++j) {
    DetectedObject& d = detections[static_cast<std::size_t>(j)];
    d.track = -1;
    if (!std::isfinite(d.x) || !std::isfinite(d.y)) {
      detection_used_[static_cast<std::size_t>(j)] = 1;
      ++counters_.invalid_detections;
    }
  }

  // The usable detections in x order, so that each track looks only at those within its gate
  // in x: thousands of detections and a thousand tracks cost a sort and short scans, not every
  // pair (the pairs gathered are the same, and their order is the sort's below).
  by_x_.clear();
  for (int j = 0; j < n_detections; ++j) {
    if (!detection_used_[static_cast<std::size_t>(j)]) by_x_.push_back(j);
  }
  auto x_of = [&](int j) { return detections[static_cast<std::size_t>(j)].x; };
  std::sort(by_x_.begin(), by_x_.end(),
            [&](int a, int b) { return x_of(a) < x_of(b) || (x_of(a) == x_of(b) && a < b); });

  // Predict every live track to this frame and gather the gated pairs.
  candidates_.clear();
  const double gate2 = params_.gate * params_.gate;
  const int n_live = static_cast<int>(live_slots_.size());
  for (int li = 0; li < n_live; ++li) {
    Slot& slot = slots_[static_cast<std::size_t>(live_slots_[static_cast<std::size_t>(li)])];
    const auto frames_ahead = static_cast<double>(frame - slot.ref_frame);
    slot.px = slot.fx + slot.fvx * frames_ahead;
    slot.py = slot.fy + slot.fvy * frames_ahead;
    // Confirmed tracks choose first, then tentative ones with a velocity, then single
    // detections, whose wider gate would otherwise let them take a mover's detection.
    int priority = 0;
    double radius2 = gate2;
    if (slot.track.state == TrackState::Tentative) {
      if (slot.track.detections >= 2) {
        priority = 1;
      } else {
        priority = 2;
        const double radius = params_.gate + params_.max_speed * frames_ahead;
        radius2 = radius * radius;
      }
    }
    const double radius = std::sqrt(radius2);
    auto first = std::lower_bound(by_x_.begin(), by_x_.end(), slot.px - radius,
                                  [&](int j, double x) { return x_of(j) < x; });
    for (auto it = first; it != by_x_.end() && x_of(*it) <= slot.px + radius; ++it) {
      const int j = *it;
      const DetectedObject& d = detections[static_cast<std::size_t>(j)];
      const double dx = d.x - slot.px, dy = d.y - slot.py;
      const double d2 = dx * dx + dy * dy;
      if (d2 <= radius2) candidates_.push_back({priority, d2, li, j});
    }
  }

  // Greedy global assignment: the closest gated pair first, each track and detection
  // linked at most once. The order is total, so the result does not depend on the sort.
  std::sort(candidates_.begin(), candidates_.end(), [](const Candidate& a, const Candidate& b) {
    if (a.priority != b.priority) return a.priority < b.priority;
    if (a.distance2 != b.distance2) return a.distance2 < b.distance2;
    if (a.live_index != b.live_index) return a.live_index < b.live_index;
    return a.detection < b.detection;
  });
  track_linked_.assign(live_slots_.size(), 0);
  for (const Candidate& c : candidates_) {
    const auto li = static_cast<std::size_t>(c.live_index);
    const auto j = static_cast<std::size_t>(c.detection);
    if (track_linked_[li] || detection_used_[j]) continue;
    track_linked_[li] = 1;
    detection_used_[j] = 1;
    Slot& slot = slots_[static_cast<std::size_t>(live_slots_[li])];
    slot.track.detection = c.detection;
    add_detection(slot, frame, timestamp_ns, detections[j]);
  }

  // Tracks without a detection coast or end; the survivors keep their order.
  std::size_t kept = 0;
  for (std::size_t li = 0; li < live_slots_.size(); ++li) {
    const int s = live_slots_[li];
    Slot& slot = slots_[static_cast<std::size_t>(s)];
    if (!track_linked_[li]) {
      Track& t = slot.track;
      t.detection = -1;
      t.missed =
          static_cast<std::uint32_t>(std::min<std::uint64_t>(frame - t.last_frame, UINT32_MAX));
      bool ends = false;
      if (t.state == TrackState::Tentative) {
        // A tentative track with a velocity (two detections or more) survives one frame
        // without a detection: a faint fast mover missed once is still on its line. Without a
        // velocity, or missed twice, it ends.
        ends = t.detections < 2 || t.missed > 1;
        if (ends) ++counters_.tentative_dropped;
      } else if (t.missed > static_cast<std::uint32_t>(params_.coast)) {
        ends = true;
        ++counters_.confirmed_ended;
      }
      if (ends) {
        free_slots_.push_back(s);
        continue;
      }
      if (t.state != TrackState::Tentative) t.state = TrackState::Coasting;
      t.x = static_cast<float>(slot.px);
      t.y = static_cast<float>(slot.py);
    }
    live_slots_[kept++] = s;
  }
  live_slots_.resize(kept);

  // Detections no track took start tentative tracks, in catalogue order.
  for (int j = 0; j < n_detections; ++j) {
    if (detection_used_[static_cast<std::size_t>(j)]) continue;
    if (free_slots_.empty()) {
      ++counters_.overflow;
      continue;
    }
    start_track(j, frame, timestamp_ns, detections[static_cast<std::size_t>(j)]);
  }

  // Report: movers get their id the first time they are reported. Every live track's
  // position joins its tail.
  live_.clear();
  reported_slots_.clear();
  const double min_speed2 = params_.min_speed * params_.min_speed;
  for (const int s : live_slots_) {
    Slot& slot = slots_[static_cast<std::size_t>(s)];
    Track& t = slot.track;
    const double speed2 = static_cast<double>(t.vx) * t.vx + static_cast<double>(t.vy) * t.vy;
    t.mover = t.state != TrackState::Tentative && speed2 >= min_speed2;
    if (t.mover) {
      if (t.id < 0) {
        t.id = next_id_++;
        ++counters_.movers_reported;
      }
      if (t.detection >= 0) detections[static_cast<std::size_t>(t.detection)].track = t.id;
      reported_slots_.push_back(s);
    }
    if (params_.tail > 0) {
      tails_[static_cast<std::size_t>(s) * static_cast<std::size_t>(params_.tail) +
             static_cast<std::size_t>(slot.tail_head)] = {t.x, t.y};
      slot.tail_head = (slot.tail_head + 1) % params_.tail;
      slot.tail_size = std::min(slot.tail_size + 1, params_.tail);
    }
    live_.push_back(t);
  }
  std::sort(reported_slots_.begin(), reported_slots_.end(), [this](int a, int b) {
    return slots_[static_cast<std::size_t>(a)].track.id <
           slots_[static_cast<std::size_t>(b)].track.id;
  });
  reported_.clear();
  for (const int s : reported_slots_)
    reported_.push_back(slots_[static_cast<std::size_t>(s)].track);

  have_frame_ = true;
  last_frame_ = frame;
}

}  // namespace starsift
