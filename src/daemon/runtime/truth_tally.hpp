// SPDX-License-Identifier: LGPL-2.1-or-later
// The synthetic sky's movers for the summary, each counted once: seen, detected (a detection
// within the match radius in some frame), tracked (a mover track there). Only movers seen in
// the last kForgetFrames frames are remembered: the sky gives a replacement mover a new id, so
// one that left the frame does not come back, and a run of any length keeps a bounded set
// (a set of every id ever seen grew by ~170 bytes per mover, 2 MB an hour on a small sky).
// Pure, tested alone.
#pragma once

#include <cstdint>
#include <unordered_map>

namespace starsift::daemon {

class TruthTally {
 public:
  static constexpr std::uint64_t kForgetFrames = 100;

  // Mover `id` in frame `frame`, and whether it was detected and tracked there.
  void add(std::uint64_t frame, std::uint64_t id, bool detected, bool tracked) {
    auto [it, added] = active_.try_emplace(id);
    Entry& e = it->second;
    if (added) ++movers_;
    if (detected && !e.detected) ++detected_;
    if (tracked && !e.tracked) ++tracked_;
    e.detected = e.detected || detected;
    e.tracked = e.tracked || tracked;
    e.last_frame = frame;
    if (frame >= next_prune_) prune(frame);
  }

  std::uint64_t movers() const noexcept { return movers_; }
  std::uint64_t detected() const noexcept { return detected_; }
  std::uint64_t tracked() const noexcept { return tracked_; }
  std::size_t remembered() const noexcept { return active_.size(); }

 private:
  struct Entry {
    std::uint64_t last_frame = 0;
    bool detected = false;
    bool tracked = false;
  };
  void prune(std::uint64_t frame) {
    std::erase_if(active_,
                  [&](const auto& kv) { return kv.second.last_frame + kForgetFrames < frame; });
    next_prune_ = frame + kForgetFrames;
  }
  std::unordered_map<std::uint64_t, Entry> active_;
  std::uint64_t movers_ = 0, detected_ = 0, tracked_ = 0;
  std::uint64_t next_prune_ = 0;
};

}  // namespace starsift::daemon
