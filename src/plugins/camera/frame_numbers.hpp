// SPDX-License-Identifier: LGPL-2.1-or-later
// Camera frame ids as one growing frame number, and the frames missing between two that
// arrived. GigE Vision 1.x numbers frames (block ids) with 16 bits, 1..65535, skipping 0 when
// it wraps; GigE Vision 2 and USB3 Vision use 64 bits. A frame the camera sent but the host
// never got (lost packets, no free buffer) shows as a gap.
#pragma once

#include <cstdint>

namespace starsift::camera {

class FrameNumbers {
 public:
  struct Step {
    std::uint64_t number = 0;   // the frame's number: its id, unwrapped past 65535
    std::uint64_t missing = 0;  // frames between the previous one and this one
    bool restarted = false;     // the id went backwards without wrapping: numbering restarted
  };

  // The frame with camera id `id` arrived.
  Step next(std::uint64_t id) noexcept;

  // Forget the previous frame (a new acquisition numbers afresh).
  void reset() noexcept { have_last_ = false; }

 private:
  bool have_last_ = false;
  std::uint64_t last_id_ = 0;
  std::uint64_t last_number_ = 0;
};

}  // namespace starsift::camera
