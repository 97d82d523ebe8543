// The last frames' WhitenStats, kept so that an element handing out a frame later than it
// was whitened (the streaming engine at depth > 1) can still pair it with its numbers.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "pipeline/whiten/stats.hpp"

namespace starsift {

// Stats of this many frames are kept (more than the deepest streaming engine holds).
inline constexpr int kWhitenStatsRing = 16;

class WhitenStatsRing {
 public:
  void push(const WhitenStats& stats) noexcept {
    entries_[head_] = stats;
    head_ = (head_ + 1) % kWhitenStatsRing;
    if (size_ < kWhitenStatsRing) ++size_;
  }
  void clear() noexcept { size_ = head_ = 0; }

  // The newest entry, or all zero when there is none.
  WhitenStats newest() const noexcept {
    return size_ == 0 ? WhitenStats{} : entries_[(head_ + kWhitenStatsRing - 1) % kWhitenStatsRing];
  }
  // The entry of frame `frame` (WhitenStats::frame), when it is still kept.
  std::optional<WhitenStats> find(std::uint64_t frame) const noexcept {
    for (int i = 0; i < size_; ++i) {
      const WhitenStats& s = entries_[(head_ + kWhitenStatsRing - 1 - i) % kWhitenStatsRing];
      if (s.frame == frame) return s;
    }
    return std::nullopt;
  }

 private:
  std::array<WhitenStats, kWhitenStatsRing> entries_{};
  int head_ = 0;
  int size_ = 0;
};

}  // namespace starsift
