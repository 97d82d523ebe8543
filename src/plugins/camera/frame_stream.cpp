// SPDX-License-Identifier: LGPL-2.1-or-later
#include "plugins/camera/frame_stream.hpp"

#include <glib.h>

#include <cstring>
#include <new>
#include <string>

#include "pipeline/error.hpp"

namespace starsift::camera {

namespace {

// What an ArvBuffer carries as user data: the lender's token, until the frame is handed back
// (owner taken) or the buffer is destroyed unfilled (owner released).
struct Loan {
  void* owner;
  FrameStream::Release release;
};

void end_loan(gpointer data) {
  auto* loan = static_cast<Loan*>(data);
  if (loan->owner != nullptr) loan->release(loan->owner);
  delete loan;
}

}  // namespace

FrameStream::FrameStream(ArvCamera* camera, const char* camera_name) {
  GError* error = nullptr;
  stream_ = arv_camera_create_stream(camera, nullptr, nullptr, &error);
  if (stream_ == nullptr) {
    std::string message = std::string("camera '") + camera_name + "': cannot open its stream: " +
                          (error != nullptr ? error->message : "unknown error");
    if (error != nullptr) g_error_free(error);
    throw Error(std::move(message));
  }
  if (ARV_IS_GV_STREAM(stream_)) {
    // A receive buffer the size of a frame (the kernel caps it at net.core.rmem_max): a frame
    // that arrives while the stream's thread is busy waits there instead of being dropped.
    g_object_set(stream_, "socket-buffer", ARV_GV_STREAM_SOCKET_BUFFER_AUTO, "socket-buffer-size",
                 0, nullptr);
  }
}

FrameStream::~FrameStream() {
  // Destroying the stream joins its thread and destroys the buffers it holds, which ends
  // their loans.
  if (stream_ != nullptr) g_object_unref(stream_);
}

bool FrameStream::lend(void* data, std::size_t size, void* owner, Release release) noexcept {
  auto* loan = new (std::nothrow) Loan{owner, release};
  if (loan == nullptr) {
    release(owner);
    return false;
  }
  ArvBuffer* buffer = arv_buffer_new_full(size, data, loan, end_loan);
  arv_stream_push_buffer(stream_, buffer);  // the stream takes the reference
  ++lent_;
  return true;
}

std::optional<CameraFrame> FrameStream::pop(std::uint64_t timeout_us) {
  const gint64 deadline = g_get_monotonic_time() + static_cast<gint64>(timeout_us);
  for (;;) {
    const gint64 left = deadline - g_get_monotonic_time();
    if (left <= 0) return std::nullopt;
    ArvBuffer* buffer = arv_stream_timeout_pop_buffer(stream_, static_cast<guint64>(left));
    if (buffer == nullptr) return std::nullopt;
    if (arv_buffer_get_status(buffer) != ARV_BUFFER_STATUS_SUCCESS) {
      ++incomplete_;
      arv_stream_push_buffer(stream_, buffer);  // same memory, same loan: fill it again
      continue;
    }
    CameraFrame frame;
    frame.frame_id = arv_buffer_get_frame_id(buffer);
    frame.camera_ns = arv_buffer_get_timestamp(buffer);
    frame.host_ns = arv_buffer_get_system_timestamp(buffer);
    frame.payload_type = arv_buffer_get_payload_type(buffer);
    if (frame.payload_type == ARV_BUFFER_PAYLOAD_TYPE_IMAGE) {
      frame.width = arv_buffer_get_image_width(buffer);
      frame.height = arv_buffer_get_image_height(buffer);
      frame.pixel_format = arv_buffer_get_image_pixel_format(buffer);
    }
    arv_buffer_get_data(buffer, &frame.bytes);
    // The frame's memory goes back to the lender: the loan ends without a release.
    auto* loan = static_cast<Loan*>(const_cast<void*>(arv_buffer_get_user_data(buffer)));
    frame.owner = loan->owner;
    loan->owner = nullptr;
    g_object_unref(buffer);
    --lent_;
    return frame;
  }
}

StreamCounters FrameStream::counters() const {
  StreamCounters c;
  // By name, as each kind of stream lists its own (USB3 Vision streams count no packets).
  const guint n = arv_stream_get_n_infos(stream_);
  for (guint i = 0; i < n; ++i) {
    const char* name = arv_stream_get_info_name(stream_, i);
    if (name == nullptr || arv_stream_get_info_type(stream_, i) != G_TYPE_UINT64) continue;
    std::uint64_t* field = nullptr;
    if (std::strcmp(name, "n_completed_buffers") == 0) field = &c.completed;
    if (std::strcmp(name, "n_failures") == 0) field = &c.failures;
    if (std::strcmp(name, "n_underruns") == 0) field = &c.underruns;
    if (std::strcmp(name, "n_timeouts") == 0) field = &c.timeouts;
    if (std::strcmp(name, "n_missing_frames") == 0) field = &c.missing_frames;
    if (std::strcmp(name, "n_missing_packets") == 0) field = &c.missing_packets;
    if (std::strcmp(name, "n_resent_packets") == 0) field = &c.resent_packets;
    if (std::strcmp(name, "n_transferred_bytes") == 0) field = &c.transferred_bytes;
    if (field != nullptr) *field = arv_stream_get_info_uint64(stream_, i);
  }
  return c;
}

}  // namespace starsift::camera
