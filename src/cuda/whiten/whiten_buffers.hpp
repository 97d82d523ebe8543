// SPDX-License-Identifier: LGPL-2.1-or-later
// The device memory of one whitening stage: every buffer of WhitenDeviceState carved from one
// allocation (one size table, whiten_buffers.cpp), the cuFFT plans of shift: resample, and
// the analysis window's constants. Allocated when the stage is configured, never per frame.
#pragma once

#include <cstddef>

#include "cuda/whiten/whiten.cuh"
#include "pipeline/pixel_format.hpp"
#include "pipeline/whiten/params.hpp"

namespace starsift::cuda {

class WhitenDeviceBuffers {
 public:
  WhitenDeviceBuffers() = default;
  ~WhitenDeviceBuffers() { release(); }
  WhitenDeviceBuffers(const WhitenDeviceBuffers&) = delete;
  WhitenDeviceBuffers& operator=(const WhitenDeviceBuffers&) = delete;

  // For `params` (valid for `shape`) and frames of `shape`; the state's content is undefined
  // until launch_whiten_reset(). Throws Error (CUDA or cuFFT failure), leaving nothing.
  void allocate(const WhitenParams& params, const FrameShape& shape);
  void release() noexcept;

  const WhitenDeviceState& state() const noexcept { return state_; }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  WhitenDeviceState state_;
  void* memory_ = nullptr;
  std::size_t bytes_ = 0;
  bool plans_ = false;
};

}  // namespace starsift::cuda
