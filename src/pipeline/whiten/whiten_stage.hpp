// SPDX-License-Identifier: LGPL-2.1-or-later
// Temporal whitening as a stage, on the CPU or a CUDA device (whiten_stage_cuda.hpp). The
// stage keeps a history across frames: frames must come in order; configure() and
// reset_state() start a new history.
#pragma once

#include <memory>
#include <optional>

#include "pipeline/backend.hpp"
#include "pipeline/stage.hpp"
#include "pipeline/whiten/params.hpp"
#include "pipeline/whiten/stats.hpp"

namespace starsift {

// ResultLayout::kind of whitening's per-frame result: one WhitenStats record.
inline constexpr std::string_view kWhitenStatsKind = "whiten-stats";

class WhitenStage : public FilterStage {
 public:
  std::string_view name() const override { return "whiten"; }
  bool supports(PixelFormat format) const override { return whiten_supports(format); }
  // The input's shape for output: residual, GRAY32F of the same size otherwise.
  FrameShape output_shape(const FrameShape& in) const override {
    return whiten_output_shape(params_, in);
  }

  // Validates and stores new parameters. gamma, refit-interval, shift-max, shift-noise,
  // reject-sigma, reject-object-sigma, warmup, offset, gain and despike apply from the next frame
  // on; any other change restarts the history (its buffers are reallocated here, between frames,
  // never in process()). A new `output` changes output_shape(): the caller configures the chain
  // again. A refusal (Error) leaves the stage as it was.
  void set_params(const WhitenParams& params) {
    params.validate();
    apply_params(params);
    params_ = params;
  }
  const WhitenParams& params() const noexcept { return params_; }

  // Each frame's WhitenStats come back with it as the stage's result: one record.
  std::optional<ResultLayout> result_layout() const override {
    return ResultLayout{kWhitenStatsKind, sizeof(WhitenStats), 1, true};
  }

  // What the last frame filtered by process() did; all zero before the first. Frames queued
  // with enqueue() report through their result instead.
  virtual WhitenStats last_stats() const = 0;

 protected:
  explicit WhitenStage(const WhitenParams& params) : params_(params) { params_.validate(); }
  // Makes the backend's state follow `params` (valid), or throws leaving it unchanged.
  virtual void apply_params(const WhitenParams& params) = 0;
  WhitenParams params_;
};

// Builds the stage for a resolved backend choice (see resolve_backend()): a CUDA choice in a
// build without CUDA throws Error.
std::unique_ptr<WhitenStage> make_whiten_stage(const WhitenParams& params,
                                               const BackendChoice& choice);

}  // namespace starsift
