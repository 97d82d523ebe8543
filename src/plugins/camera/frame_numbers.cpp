// SPDX-License-Identifier: LGPL-2.1-or-later
#include "plugins/camera/frame_numbers.hpp"

namespace starsift::camera {

namespace {

constexpr std::uint64_t kMax16 = 0xFFFF;
// A 16-bit id that falls by more than half the range wrapped; a smaller fall is a restart.
constexpr std::uint64_t kWrapFall = kMax16 / 2;

}  // namespace

FrameNumbers::Step FrameNumbers::next(std::uint64_t id) noexcept {
  Step step;
  if (!have_last_) {
    step.number = id;
  } else if (id > last_id_) {
    step.missing = id - last_id_ - 1;
    step.number = last_number_ + (id - last_id_);
  } else if (last_id_ <= kMax16 && last_id_ - id > kWrapFall) {
    // 16-bit ids run 1..65535 and wrap to 1 (0 is not a valid block id).
    const std::uint64_t advance = (kMax16 - last_id_) + (id == 0 ? 1 : id);
    step.missing = advance - 1;
    step.number = last_number_ + advance;
  } else {
    // The same id again or a small fall: the camera restarted its numbering (a new
    // acquisition, a reset). Numbers go on from the last one; nothing is known to be missing.
    step.restarted = true;
    step.number = last_number_ + 1;
  }
  have_last_ = true;
  last_id_ = id;
  last_number_ = step.number;
  return step;
}

}  // namespace starsift::camera
