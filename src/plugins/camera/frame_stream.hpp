// SPDX-License-Identifier: LGPL-2.1-or-later
// A camera's stream of frames through aravis, into memory the caller lends it: each frame
// lands where the caller wants it (its pinned frame pool) and comes back with the camera's
// frame id and timestamps. Frames that arrive incomplete are lent again at once and counted.
// aravis side only: the memory is a pointer and an owner token with a release function.
#pragma once

#include <arv.h>

#include <cstddef>
#include <cstdint>
#include <optional>

namespace starsift::camera {

// aravis's counters of the stream, since it was created (0 where the stream has none:
// USB3 Vision streams count no packets).
struct StreamCounters {
  std::uint64_t completed = 0;        // buffers filled, whole or not
  std::uint64_t failures = 0;         // buffers completed with an error
  std::uint64_t underruns = 0;        // frames that came while no lent buffer was free
  std::uint64_t timeouts = 0;         // frames that stopped arriving part way
  std::uint64_t missing_frames = 0;   // frame ids the stream saw skipped
  std::uint64_t missing_packets = 0;  // packets that never arrived (after resends)
  std::uint64_t resent_packets = 0;   // packets the camera sent again on request
  std::uint64_t transferred_bytes = 0;
};

// A frame that arrived whole, in memory lent with lend(): `owner` is the caller's again.
struct CameraFrame {
  void* owner = nullptr;
  std::uint64_t frame_id = 0;   // the camera's id (16-bit on GigE Vision 1.x)
  std::uint64_t camera_ns = 0;  // the camera's timestamp, ns on its own clock
  std::uint64_t host_ns = 0;    // host UTC, ns since 1970, when its first data arrived
  int width = 0;
  int height = 0;
  ArvPixelFormat pixel_format = 0;
  ArvBufferPayloadType payload_type = ARV_BUFFER_PAYLOAD_TYPE_UNKNOWN;
  std::size_t bytes = 0;  // bytes received
};

class FrameStream {
 public:
  // The stream of `camera` (not yet acquiring). Throws Error.
  explicit FrameStream(ArvCamera* camera, const char* camera_name);
  // Stops the stream's thread; memory still lent is released through its release function.
  ~FrameStream();
  FrameStream(const FrameStream&) = delete;
  FrameStream& operator=(const FrameStream&) = delete;

  using Release = void (*)(void* owner);
  // Lends `size` bytes at `data` for one frame. Until the frame comes back from pop(), or
  // `release(owner)` is called (when the stream ends), aravis may write there. Out of memory,
  // the memory is released at once and false returned.
  bool lend(void* data, std::size_t size, void* owner, Release release) noexcept;

  // The next frame that arrived whole, waiting at most `timeout_us`; nothing when none did.
  std::optional<CameraFrame> pop(std::uint64_t timeout_us);

  int lent() const noexcept { return lent_; }
  // Buffers that came back incomplete and were lent again (any status but success).
  std::uint64_t incomplete() const noexcept { return incomplete_; }
  StreamCounters counters() const;

 private:
  ArvStream* stream_ = nullptr;
  int lent_ = 0;
  std::uint64_t incomplete_ = 0;
};

}  // namespace starsift::camera
