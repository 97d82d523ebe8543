// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/whiten/whiten_stage_cuda.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <string>

#include "cuda/cuda_check.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/whiten/whiten.cuh"
#include "cuda/whiten/whiten_buffers.hpp"
#include "pipeline/error.hpp"
#include "pipeline/frame_memory.hpp"
#include "pipeline/host_staging_cuda.hpp"
#include "pipeline/whiten/reference.hpp"

namespace starsift {

namespace {

std::string shape_text(int width, int height, PixelFormat format) {
  return std::to_string(width) + "x" + std::to_string(height) + " " +
         std::string(to_string(format));
}

using cuda::SyncEvent;

// The page-locked record process() copies its frame's stats into (frame memory: pinned
// whenever a device is usable, which a CUDA stage requires).
class PinnedStats {
 public:
  PinnedStats() : memory_(allocate_frame_memory(sizeof(WhitenStats))) {}
  ~PinnedStats() { free_frame_memory(memory_); }
  PinnedStats(const PinnedStats&) = delete;
  PinnedStats& operator=(const PinnedStats&) = delete;
  WhitenStats* get() const noexcept { return static_cast<WhitenStats*>(memory_.data); }

 private:
  FrameMemory memory_;
};

class WhitenStageCuda final : public WhitenStage {
 public:
  WhitenStageCuda(const WhitenParams& params, int device_id)
      : WhitenStage(params), device_id_(device_id) {
    params_.validate_for_cuda();  // before any device work: a refusal costs nothing
    cuda::use_device(device_id_);
    stream_ = std::make_unique<cuda::Stream>();
    state_done_ = std::make_unique<SyncEvent>();
    stats_ = std::make_unique<PinnedStats>();
    *stats_->get() = WhitenStats{};
  }

  ~WhitenStageCuda() override {
    // Frames still queued use the buffers about to be freed.
    cudaEventSynchronize(state_done_->get());
  }

  Backend backend() const override { return Backend::Cuda; }
  bool capturable() const override { return false; }

  void configure(const FrameShape& shape) override { allocate(shape, true); }

  void configure_device(const FrameShape& shape) override { allocate(shape, false); }

  void reset_state() override { restart(); }

  void enqueue(ConstImageView in, ImageView out, void* stream) override {
    if (!buffers_) {
      throw Error("whiten: enqueue() before configure_device()", "configure_device() first");
    }
    run_frame(in, out, static_cast<cudaStream_t>(stream));
  }

  // The stats live in the device state, which the next frame (maybe on another stream)
  // overwrites once the state event allows it: the copy is queued before the event is
  // recorded again, so the next frame also waits for it.
  void enqueue_result(ResultView result, void* stream) const override {
    const auto s = static_cast<cudaStream_t>(stream);
    cuda::check(cudaMemcpyAsync(result.records<WhitenStats>(), buffers_->state().stats,
                                sizeof(WhitenStats), cudaMemcpyDeviceToDevice, s),
                "whiten stats (cudaMemcpyAsync)");
    cuda::check(cudaEventRecord(state_done_->get(), s), "cudaEventRecord");
  }

  void process(ConstImageView in, ImageView out) override {
    if (!buffers_) {
      throw Error("whiten: process() before configure()", "configure() with the frame shape");
    }
    if (in.width != shape_.width || in.height != shape_.height || in.format != shape_.format) {
      throw Error("whiten: frame " + shape_text(in.width, in.height, in.format) +
                      " differs from the configured shape",
                  shape_text(shape_.width, shape_.height, shape_.format));
    }
    const FrameShape out_shape = output_shape(shape_);
    if (out.width != out_shape.width || out.height != out_shape.height ||
        out.format != out_shape.format) {
      throw Error("whiten: output frame " + shape_text(out.width, out.height, out.format) +
                      " differs from the output shape",
                  shape_text(out_shape.width, out_shape.height, out_shape.format));
    }
    if (!staging_.ready()) {
      throw Error("whiten: process() on a stage configured for device chains",
                  "configure() before process()");
    }
    cuda::use_device(device_id_);
    const cudaStream_t s = stream_->get();
    run_frame(staging_.upload(in, s), staging_.output(out), s);
    cuda::check(cudaMemcpyAsync(stats_->get(), buffers_->state().stats, sizeof(WhitenStats),
                                cudaMemcpyDeviceToHost, s),
                "whiten stats (cudaMemcpyAsync)");
    staging_.download(out, s);
    // The stage's own stream only: other streams and elements keep running.
    cuda::check(cudaStreamSynchronize(s), "whiten (cudaStreamSynchronize)");
  }

  WhitenStats last_stats() const override { return *stats_->get(); }

 private:
  // Device state (and, for the host form, staging) for frames of `shape`: a new history.
  void allocate(const FrameShape& shape, bool staging) {
    shape.validate();
    params_.validate_for(shape);
    cuda::use_device(device_id_);
    wait_for_frames();
    buffers_.reset();  // a refused shape leaves the stage unconfigured, not half-configured
    staging_.release();
    auto fresh = std::make_unique<cuda::WhitenDeviceBuffers>();
    fresh->allocate(params_, shape);
    if (staging) allocate_staging(shape, params_);
    buffers_ = std::move(fresh);
    shape_ = shape;
    host_form_ = staging;
    restart();
  }

  void allocate_staging(const FrameShape& shape, const WhitenParams& params) {
    staging_.allocate(shape, whiten_output_shape(params, shape));
  }

  void apply_params(const WhitenParams& params) override {
    params.validate_for_cuda();  // also before configure(): params_ takes what passes here
    if (!buffers_) return;
    params.validate_for(shape_);
    if (whiten_live_change(params_, params)) return;  // read from params_ at the next frame
    // A new history: built before the old one goes, so a refusal keeps the old one.
    cuda::use_device(device_id_);
    wait_for_frames();
    auto fresh = std::make_unique<cuda::WhitenDeviceBuffers>();
    fresh->allocate(params, shape_);
    if (host_form_) allocate_staging(shape_, params);
    buffers_ = std::move(fresh);
    restart();
  }

  // The frames queued so far finish before their buffers change (set_params and configure
  // only, between frames: never in the per-frame path).
  void wait_for_frames() {
    cuda::check(cudaEventSynchronize(state_done_->get()), "whiten (cudaEventSynchronize)");
  }

  // The next frame starts a new history; the device state is cleared by the next frame's
  // stream, in order, before its work.
  void restart() noexcept {
    pending_reset_ = true;
    frame_ = 0;
    noise_updates_ = 0;
    frames_since_fit_ = 0;
    last_n_ = 0;
    stored_ = 0;
    head_ = 0;
    *stats_->get() = WhitenStats{};
  }

  int slot_of_lag(int lag) const noexcept {
    const int capacity = params_.history + 1;
    return ((head_ - lag) % capacity + capacity) % capacity;
  }

  // What this frame does, from the frames before it (WhitenState::process() step by step).
  cuda::WhitenFramePlan plan_frame() const {
    const WhitenParams& p = params_;
    const int capacity = p.history + 1;
    cuda::WhitenFramePlan plan;
    plan.frame = frame_;
    plan.resample = p.shift == WhitenShift::Resample;
    plan.past = p.fit == WhitenFit::Past;
    const int n = whiten_history_in_use(p, stored_);
    plan.n = n;
    plan.due = whiten_weights_due(p, n, last_n_, frames_since_fit_);
    plan.kept = std::min(stored_, capacity - 1);
    plan.lags_read = std::max(n, plan.kept);
    plan.new_slot = head_;
    plan.evicting = stored_ == capacity;
    // (With a half history the row pairs the stored, rounded frame, not the fitted one.)
    plan.row_from_dots = plan.resample && !plan.past && plan.due && n >= 1 && n == plan.kept &&
                         whiten_history_scale(p, shape_) == 0.0f;
    for (int k = 0; k < plan.lags_read; ++k) plan.lag_slots[k] = slot_of_lag(k + 1);
    const int first_lag = plan.past ? 2 : 1;
    for (int k = 0; k < n; ++k) plan.fit_slots[k] = slot_of_lag(first_lag + k);
    plan.target_slot = stored_ >= 1 ? slot_of_lag(1) : 0;
    plan.gamma = p.gamma;
    plan.shift_max = p.shift_max;
    plan.fit_subsample = p.effective_fit_subsample(shape_);
    plan.noise = whiten_noise_constants(p, noise_updates_, n);
    plan.warm = n < p.history;
    plan.warmup = p.warmup;
    plan.output = p.output;
    plan.offset = static_cast<float>(p.effective_offset(shape_));
    plan.gain = static_cast<float>(p.effective_gain(shape_));
    plan.saturation = whiten_saturation(shape_);
    plan.despike = p.despike;
    return plan;
  }

  void advance(const cuda::WhitenFramePlan& plan) noexcept {
    const int capacity = params_.history + 1;
    if (plan.n == 0) {
      last_n_ = 0;
    } else if (plan.due) {
      last_n_ = plan.n;
      frames_since_fit_ = 0;
    }
    if (plan.n >= 1) ++noise_updates_;
    ++frames_since_fit_;
    ++frame_;
    head_ = (head_ + 1) % capacity;
    stored_ = std::min(stored_ + 1, capacity);
  }

  void run_frame(ConstImageView in, ImageView out, cudaStream_t stream) {
    const cuda::WhitenDeviceState& state = buffers_->state();
    // The previous frame's state update first, whichever stream it ran on.
    cuda::check(cudaStreamWaitEvent(stream, state_done_->get(), 0), "cudaStreamWaitEvent");
    if (pending_reset_) {
      cuda::check(cuda::launch_whiten_reset(state, stream), "whiten reset");
      pending_reset_ = false;
    }
    const cuda::WhitenFramePlan plan = plan_frame();
    const cuda::WhitenFrameView d_in{const_cast<std::byte*>(in.data), in.stride, in.format};
    const cuda::WhitenFrameView d_out{out.data, out.stride, out.format};
    cuda::check(cuda::launch_whiten_frame(state, plan, d_in, d_out, stream), "whiten kernels");
    cuda::check(cudaEventRecord(state_done_->get(), stream), "cudaEventRecord");
    advance(plan);
  }

  int device_id_;
  std::unique_ptr<cuda::Stream> stream_;   // process() only
  std::unique_ptr<SyncEvent> state_done_;  // recorded after each frame's state update
  std::unique_ptr<cuda::WhitenDeviceBuffers> buffers_;
  HostStaging staging_;     // process() only
  bool host_form_ = false;  // configured for process() (configure(), not configure_device())
  FrameShape shape_;

  // What follows from the frames seen (WhitenState's counters, mirrored).
  bool pending_reset_ = true;
  std::uint64_t frame_ = 0;
  std::uint64_t noise_updates_ = 0;
  int frames_since_fit_ = 0;
  int last_n_ = 0;  // n of the weights on the device (0: none)
  int stored_ = 0;  // history frames stored
  int head_ = 0;    // the slot the next frame goes to

  std::unique_ptr<PinnedStats> stats_;  // process(): the last frame's stats
};

}  // namespace

std::unique_ptr<WhitenStage> make_whiten_stage_cuda(const WhitenParams& params, int device_id) {
  return std::make_unique<WhitenStageCuda>(params, device_id);
}

}  // namespace starsift
