// SPDX-License-Identifier: LGPL-2.1-or-later
// The interface every filter stage implements, on either backend.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "pipeline/backend.hpp"
#include "pipeline/error.hpp"
#include "pipeline/image.hpp"
#include "pipeline/pixel_format.hpp"
#include "pipeline/stage_result.hpp"

namespace starsift {

class FilterStage {
 public:
  virtual ~FilterStage() = default;

  virtual std::string_view name() const = 0;
  virtual Backend backend() const = 0;

  // True when the stage can process frames of this format (no allocation, no throw).
  virtual bool supports(PixelFormat format) const = 0;

  // The shape of the frames the stage writes for input frames of `in` (the same, unless the
  // stage converts: e.g. whitening to a float residual). A function of the parameters and
  // `in` only: valid before configure(), so caps can be negotiated from it.
  virtual FrameShape output_shape(const FrameShape& in) const { return in; }

  // True when the frame the stage writes is its input, unchanged (detection with `output:
  // input`). Engines then hand that frame on instead of a copy: `out` may be `in` itself and
  // such a stage writes nothing into it; a chain whose stages all keep their frames hands back
  // the submitted frame, and on CUDA downloads none. Like output_shape(), a function of the
  // parameters only.
  virtual bool keeps_frame() const { return false; }

  // The result the stage hands back with every frame (stage_result.hpp), or nothing. Fixed
  // while the stage lives: the engine sizes its result areas from it at configure.
  virtual std::optional<ResultLayout> result_layout() const { return std::nullopt; }
  // The result of the frame process() just filtered, into host memory of result_layout()'s
  // bytes(). Called right after that process(), on the same thread.
  virtual void write_result(ResultView result) const { (void)result; }

  // Prepares for frames of `shape`: validates it and allocates every buffer the stage
  // needs, so process() never allocates. Called again on a caps change. Throws Error.
  virtual void configure(const FrameShape& shape) = 0;

  // Filters one frame, host memory in and out (`in` of the configured shape, `out` of
  // output_shape(); strides free).
  // Synchronous: `out` is complete on return. Throws Error on a backend failure.
  virtual void process(ConstImageView in, ImageView out) = 0;

  // Stages that keep state across frames (temporal whitening) forget it here: after a
  // flush, a seek or a gap the next frame starts a new history. Stateless stages ignore it.
  // configure() forgets it too. Called between frames, never while one is queued.
  virtual void reset_state() {}

  // The device-resident form, for chains that keep frames on the GPU between stages (CUDA
  // stages only). configure_device() prepares for enqueue() without the host staging
  // buffers process() needs. enqueue() takes device views of the configured shape, queues
  // the work on `stream` (a cudaStream_t) and returns without waiting; it never allocates.
  // Successive frames may come on different streams (the streaming engine gives each slot
  // its own), always in frame order: a stage with state across frames orders its updates
  // itself, waiting on an event it recorded after the previous frame's update, never with
  // a device-wide sync.
  virtual void configure_device(const FrameShape& shape) {
    (void)shape;
    throw Error("stage '" + std::string(name()) + "' on " + std::string(to_string(backend())) +
                    " has no device-resident form",
                "CUDA stages in a device chain");
  }
  // Whether enqueue() may be recorded once into a CUDA graph and replayed for every frame:
  // true when it only launches work on `stream` whose arguments stay the same from frame to
  // frame. Stages that wait on events across streams or change launch arguments per frame
  // (state across frames) say false.
  virtual bool capturable() const { return true; }
  virtual void enqueue(ConstImageView in, ImageView out, void* stream) {
    (void)in;
    (void)out;
    (void)stream;
    configure_device({});
  }
  // The result of the frame enqueue() just queued, into device memory of result_layout()'s
  // bytes(), queued on the same `stream` after it; returns without waiting. The engine copies
  // the area down with the frame.
  virtual void enqueue_result(ResultView result, void* stream) const {
    (void)result;
    (void)stream;
  }
};

// The `out` an engine hands a stage that keeps its frame: the input's own memory, which the
// stage does not write.
inline ImageView kept_frame_out(ConstImageView in) {
  return {const_cast<std::byte*>(in.data), in.width, in.height, in.stride, in.format};
}

}  // namespace starsift
