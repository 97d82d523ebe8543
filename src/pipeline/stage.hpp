// The interface every filter stage implements, on either backend.
#pragma once

#include <string>
#include <string_view>

#include "pipeline/backend.hpp"
#include "pipeline/error.hpp"
#include "pipeline/image.hpp"
#include "pipeline/pixel_format.hpp"

namespace starsift {

class FilterStage {
 public:
  virtual ~FilterStage() = default;

  virtual std::string_view name() const = 0;
  virtual Backend backend() const = 0;

  // True when the stage can process frames of this format (no allocation, no throw).
  virtual bool supports(PixelFormat format) const = 0;

  // Prepares for frames of `shape`: validates it and allocates every buffer the stage
  // needs, so process() never allocates. Called again on a caps change. Throws Error.
  virtual void configure(const FrameShape& shape) = 0;

  // Filters one frame, host memory in and out (same shape as configured; strides free).
  // Synchronous: `out` is complete on return. Throws Error on a backend failure.
  virtual void process(ConstImageView in, ImageView out) = 0;

  // The device-resident form, for chains that keep frames on the GPU between stages (CUDA
  // stages only). configure_device() prepares for enqueue() without the host staging
  // buffers process() needs. enqueue() takes device views of the configured shape, queues
  // the work on `stream` (a cudaStream_t) and returns without waiting; it never allocates.
  virtual void configure_device(const FrameShape& shape) {
    (void)shape;
    throw Error("stage '" + std::string(name()) + "' on " + std::string(to_string(backend())) +
                    " has no device-resident form",
                "CUDA stages in a device chain");
  }
  virtual void enqueue(ConstImageView in, ImageView out, void* stream) {
    (void)in;
    (void)out;
    (void)stream;
    configure_device({});
  }
};

}  // namespace starsift
