// SPDX-License-Identifier: LGPL-2.1-or-later
// The streaming engine on a CUDA device. Each slot owns pinned host input and output
// (cudaHostAlloc, so transfers are true DMA and asynchronous), its device frames and its
// own stream; a slot's upload, stages and download are queued on its stream and an event
// marks it done. Successive slots on different streams overlap: the copy engines move one
// frame in and another out while the SMs filter a third. Nothing is allocated per frame and
// nothing waits device-wide: wait_oldest() waits for one event.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <thread>

#include "cuda/cuda_check.hpp"
#include "cuda/device_buffer.hpp"
#include "pipeline/engine/device_chain.hpp"
#include "pipeline/engine/streaming_chain.hpp"
#include "pipeline/error.hpp"
#include "pipeline/frame_memory.hpp"
#include "pipeline/thread_pool.hpp"

namespace starsift {

namespace {

// Frames from this size on are copied into a slot by several threads.
constexpr std::size_t kParallelCopyBytes = 4u << 20;
constexpr unsigned kParallelCopyThreads = 8;

// Pinned (page-locked) host memory: the copies of a slot are true DMA.
class PinnedBytes {
 public:
  PinnedBytes() = default;
  ~PinnedBytes() { free_frame_memory(memory_); }
  PinnedBytes(const PinnedBytes&) = delete;
  PinnedBytes& operator=(const PinnedBytes&) = delete;

  void allocate(std::size_t bytes) {
    free_frame_memory(memory_);
    memory_ = {};
    if (bytes == 0) return;
    const FrameMemory memory = allocate_frame_memory(bytes);
    if (!memory.pinned) {
      free_frame_memory(memory);
      throw Error("streaming chain: page-locked host memory is not available",
                  "a usable CUDA device for backend=cuda");
    }
    memory_ = memory;
  }
  std::byte* data() const noexcept { return static_cast<std::byte*>(memory_.data); }

 private:
  FrameMemory memory_;
};

// One frame of pinned memory.
class PinnedFrame {
 public:
  void allocate(const FrameShape& shape) {
    const auto stride = static_cast<std::ptrdiff_t>(shape.width) * bytes_per_pixel(shape.format);
    bytes_.allocate(static_cast<std::size_t>(stride) * shape.height);
    view_ = {bytes_.data(), shape.width, shape.height, stride, shape.format};
  }
  ImageView view() const noexcept { return view_; }

 private:
  PinnedBytes bytes_;
  ImageView view_;
};

// STARSIFT_CUDA_FAULT_AFTER=N makes the N+1-th frame fail as a lost GPU would (an error on
// its event), so the way a GPU fault travels (engine, element, starsiftd's fallback to the
// CPU) can be tested on a healthy GPU. Unset or 0: never.
std::uint64_t injected_fault_after() {
  const char* text = std::getenv("STARSIFT_CUDA_FAULT_AFTER");
  if (text == nullptr) return 0;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(text, &end, 10);
  return end != text && *end == '\0' ? n : 0;
}

float elapsed_ms(cudaEvent_t from, cudaEvent_t to) {
  float ms = 0.0f;
  cuda::check(cudaEventElapsedTime(&ms, from, to), "cudaEventElapsedTime");
  return ms;
}

class StreamingChainCuda final : public StreamingChain {
 public:
  StreamingChainCuda(std::vector<std::unique_ptr<FilterStage>> stages, int device_id, int depth)
      : StreamingChain(std::move(stages), depth),
        device_id_(device_id),
        fault_after_(injected_fault_after()) {
    for (const auto& s : stages_) {
      if (s->backend() != Backend::Cuda) {
        throw Error("streaming chain: stage '" + std::string(s->name()) + "' is not a CUDA stage",
                    "every stage on the chain's backend");
      }
    }
    cuda::use_device(device_id_);
    slots_.resize(static_cast<std::size_t>(depth_));
    for (auto& slot : slots_) slot = std::make_unique<Slot>();
  }

  ~StreamingChainCuda() override {
    // Frames still queued write into memory about to be freed: let them finish first.
    for (auto& slot : slots_) {
      if (slot->done() != nullptr) cudaEventSynchronize(slot->done());
    }
  }

  Backend backend() const override { return Backend::Cuda; }

  void configure(const FrameShape& shape) override {
    reset();
    cuda::use_device(device_id_);
    const std::vector<FrameShape> shapes = configure_stages(shape, true);
    retired_.clear();
    for (auto& slot : slots_) {
      slot->host_in.allocate(shapes.front());
      slot->host_out.allocate(keeps_frame_ ? FrameShape{} : shapes.back());  // none to take
      slot->frames.allocate(shapes, results_, result_bytes_);
      slot->results.allocate(result_bytes_);
      if (result_bytes_ > 0) std::memset(slot->results.data(), 0, result_bytes_);
      describe_results(slot->results.data(), slot->handed_results);
      slot->marks.resize(stages_.size() + 3);
      slot->mark_handles.clear();
      for (auto& m : slot->marks) {
        if (!m) m = std::make_unique<cuda::Event>();
        slot->mark_handles.push_back(m->get());
      }
    }
    stage_ms_.assign(stages_.size(), 0.0);
    const std::size_t frame_bytes =
        static_cast<std::size_t>(shape.width) * bytes_per_pixel(shape.format) * shape.height;
    if (frame_bytes >= kParallelCopyBytes && !copy_pool_) {
      const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
      copy_pool_ = std::make_unique<ThreadPool>(std::min(cores, kParallelCopyThreads));
    }
    const bool small = static_cast<long long>(shape.width) * shape.height <= kGraphAutoPixels;
    want_graphs_ =
        graph_policy_ == GraphPolicy::Always || (graph_policy_ == GraphPolicy::Auto && small);
    bool graphed = want_graphs_;
    for (auto& slot : slots_) {
      if (want_graphs_) graphed = capture(*slot) && graphed;
    }
    counters_.graphed = graphed;
  }

  ImageView next_input() override { return slots_.at(next_free())->host_in.view(); }

  void submit(ConstImageView in, std::uint64_t tag, InputMemory memory,
              ImageView held_output) override {
    check_submit(in, held_output);
    cuda::use_device(device_id_);
    release_retired();
    Slot& slot = *slots_[next_free()];
    // A stage changed since this slot's graph was recorded: record it again (the slot is free,
    // its last frame done).
    if (want_graphs_ && slot.captured != stage_generation_) counters_.graphed = capture(slot);
    const ImageView pinned = slot.host_in.view();
    ConstImageView source = in;  // DMA straight from the caller's page-locked frame
    if (in.data == pinned.data || memory == InputMemory::HeldPinned) {
      ++counters_.zero_copy;
    } else {  // one copy into DMA-able memory
      copy_into_slot(in, pinned);
      source = const_view(pinned);
      ++counters_.copied;
    }
    if (keeps_frame_) {
      slot.target = kept_frame_out(source);  // handed back as it came: nothing is downloaded
    } else {
      // The result goes straight into the caller's page-locked frame when it holds one.
      slot.target = held_output.data != nullptr ? held_output : slot.host_out.view();
      if (held_output.data != nullptr) ++counters_.held_outputs;
    }
    const cudaStream_t s = slot.stream.get();
    // The marks time each stage; the last one, after the download, says the frame is done.
    // Without stage timing only that one is recorded.
    const bool timed = timing_interval_ > 0 && counters_.submitted % timing_interval_ == 0;
    if (timed) {
      slot.frames.enqueue(stages_, source, slot.target, slot.results.data(), s,
                          slot.mark_handles.data());
    } else {
      slot.frames.enqueue(stages_, source, slot.target, slot.results.data(), s);
      cuda::check(cudaEventRecord(slot.done(), s), "cudaEventRecord");
    }
    slot.timed = timed;
    slot.tag = tag;
    queued();
    ++counters_.submitted;
  }

  FinishedFrame wait_oldest() override {
    if (in_flight_ == 0) throw Error("streaming chain: nothing in flight", "submit() first");
    Slot& slot = *slots_[oldest()];
    cuda::check(cudaEventSynchronize(slot.done()), "frame (cudaEventSynchronize)");
    if (fault_after_ > 0 && ++frames_waited_ > fault_after_) {
      cuda::check(cudaErrorLaunchFailure, "frame (fault injected by STARSIFT_CUDA_FAULT_AFTER)");
    }
    oldest_waited_ = true;
    finish_results(slot.results.data());
    const FinishedFrame done{const_view(slot.target), slot.tag, slot.handed_results};
    if (!slot.timed) return done;
    const auto& marks = slot.mark_handles;
    for (std::size_t i = 0; i < stages_.size(); ++i)
      stage_ms_[i] = elapsed_ms(marks[i + 1], marks[i + 2]);
    count_stage_times(stage_ms_.data());
    counters_.upload_ms_last = elapsed_ms(marks[0], marks[1]);
    counters_.download_ms_last = elapsed_ms(marks[marks.size() - 2], marks.back());
    return done;
  }

  void wait_slot(int index) override {
    const cudaEvent_t done = slots_[index]->done();
    if (done != nullptr) cuda::check(cudaEventSynchronize(done), "frame (cudaEventSynchronize)");
  }

 private:
  struct Slot {
    PinnedFrame host_in;
    PinnedFrame host_out;
    PinnedBytes results;                      // the stages' results, downloaded with the frame
    std::vector<FrameResult> handed_results;  // views of them, built at configure
    std::uint64_t captured = 0;               // stage_generation_ its graph was recorded at
    ImageView target;  // where the result goes: host_out or the caller's held memory
    DeviceChainFrames frames;
    cuda::Stream stream;
    // Before the upload, after it, after each stage, after the download (= done).
    std::vector<std::unique_ptr<cuda::Event>> marks;
    std::vector<cudaEvent_t> mark_handles;
    bool timed = false;  // the frame in the slot recorded every mark
    std::uint64_t tag = 0;

    cudaEvent_t done() const noexcept {
      return mark_handles.empty() ? nullptr : mark_handles.back();
    }
  };

  // Frames are queued on this thread in order and launches carry their arguments: a change
  // applies now, to every frame submitted after it. A replaced stage (held by its edit) lives
  // on until the frames submitted before the change have left.
  void schedule(std::function<void()> edit) override {
    edit();
    ++stage_generation_;
    retired_.push_back({counters_.submitted, std::move(edit)});
  }

  void release_retired() {
    const std::uint64_t gone = counters_.completed + counters_.dropped;
    while (!retired_.empty() && retired_.front().submitted <= gone) retired_.pop_front();
  }

  bool capture(Slot& slot) {
    slot.captured = stage_generation_;
    return slot.frames.capture_stages(stages_, slot.stream.get());
  }

  // Copies a frame that is not page-locked into a slot. One core moves ~5 GB/s, a 4096²
  // GRAY16 frame in ~6 ms: large frames are split by rows over a pool of threads (made at
  // configure, never per frame; the copy body is built once too).
  void copy_into_slot(ConstImageView from, ImageView to) {
    if (!copy_pool_) {
      for (int y = 0; y < from.height; ++y) std::memcpy(to.row(y), from.row(y), from.row_bytes());
      return;
    }
    copy_from_ = from;
    copy_to_ = to;
    copy_pool_->parallel_for(from.height, copy_rows_);
  }

  int device_id_;
  std::uint64_t fault_after_;  // STARSIFT_CUDA_FAULT_AFTER; 0: no fault injected
  std::uint64_t frames_waited_ = 0;
  std::unique_ptr<ThreadPool> copy_pool_;  // frames of kParallelCopyBytes and more
  ConstImageView copy_from_;
  ImageView copy_to_;
  std::function<void(int, int)> copy_rows_ = [this](int begin, int end) {
    for (int y = begin; y < end; ++y) {
      std::memcpy(copy_to_.row(y), copy_from_.row(y), copy_from_.row_bytes());
    }
  };
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<double> stage_ms_;
  bool want_graphs_ = false;
  std::uint64_t stage_generation_ = 0;  // changes applied to the stages so far
  struct Retired {
    std::uint64_t submitted;  // frames submitted before the change
    std::function<void()> edit;
  };
  std::deque<Retired> retired_;
};

}  // namespace

std::unique_ptr<StreamingChain> make_streaming_chain_cuda(
    std::vector<std::unique_ptr<FilterStage>> stages, int device_id, int depth) {
  return std::make_unique<StreamingChainCuda>(std::move(stages), device_id, depth);
}

}  // namespace starsift
