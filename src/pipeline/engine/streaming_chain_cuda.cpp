// The streaming engine on a CUDA device. Each slot owns pinned host input and output
// (cudaHostAlloc, so transfers are true DMA and asynchronous), its device frames and its
// own stream; a slot's upload, stages and download are queued on its stream and an event
// marks it done. Successive slots on different streams overlap: the copy engines move one
// frame in and another out while the SMs filter a third. Nothing is allocated per frame and
// nothing waits device-wide: wait_oldest() waits for one event.
#include <cuda_runtime_api.h>

#include <cstring>

#include "cuda/cuda_check.hpp"
#include "cuda/device_buffer.hpp"
#include "pipeline/chain/device_chain.hpp"
#include "pipeline/engine/streaming_chain.hpp"
#include "pipeline/error.hpp"
#include "pipeline/frame_memory.hpp"

namespace starsift {

namespace {

// Pinned (page-locked) host memory for one frame: the copies of a slot are true DMA.
class PinnedFrame {
 public:
  PinnedFrame() = default;
  ~PinnedFrame() { free_frame_memory(memory_); }
  PinnedFrame(const PinnedFrame&) = delete;
  PinnedFrame& operator=(const PinnedFrame&) = delete;

  void allocate(const FrameShape& shape) {
    free_frame_memory(memory_);
    memory_ = {};
    const auto stride = static_cast<std::ptrdiff_t>(shape.width) * bytes_per_pixel(shape.format);
    const FrameMemory memory =
        allocate_frame_memory(static_cast<std::size_t>(stride) * shape.height);
    if (!memory.pinned) {
      free_frame_memory(memory);
      throw Error("streaming chain: page-locked host memory is not available",
                  "a usable CUDA device for backend=cuda");
    }
    memory_ = memory;
    view_ = {static_cast<std::byte*>(memory_.data), shape.width, shape.height, stride,
             shape.format};
  }
  ImageView view() const noexcept { return view_; }

 private:
  FrameMemory memory_;
  ImageView view_;
};

class StreamingChainCuda final : public StreamingChain {
 public:
  StreamingChainCuda(std::vector<std::unique_ptr<FilterStage>> stages, int device_id, int depth)
      : StreamingChain(std::move(stages), depth), device_id_(device_id) {
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
    for (auto& slot : slots_) cudaEventSynchronize(slot->done.get());
  }

  Backend backend() const override { return Backend::Cuda; }

  void configure(const FrameShape& shape) override {
    shape.validate();
    reset();
    cuda::use_device(device_id_);
    for (auto& s : stages_) s->configure_device(shape);
    for (auto& slot : slots_) {
      slot->host_in.allocate(shape);
      slot->host_out.allocate(shape);
      slot->frames.allocate(shape, stages_.size());
    }
    shape_ = shape;
  }

  ImageView next_input() override { return slots_.at(next_free())->host_in.view(); }

  void submit(ConstImageView in, std::uint64_t tag, InputMemory memory) override {
    check_submit(in, shape_);
    cuda::use_device(device_id_);
    Slot& slot = *slots_[next_free()];
    const ImageView pinned = slot.host_in.view();
    ConstImageView source = in;  // DMA straight from the caller's page-locked frame
    if (in.data == pinned.data || memory == InputMemory::HeldPinned) {
      ++counters_.zero_copy;
    } else {  // one copy into DMA-able memory
      for (int y = 0; y < in.height; ++y) std::memcpy(pinned.row(y), in.row(y), in.row_bytes());
      source = const_view(pinned);
      ++counters_.copied;
    }
    const cudaStream_t s = slot.stream.get();
    slot.frames.enqueue(stages_, source, slot.host_out.view(), s);
    cuda::check(cudaEventRecord(slot.done.get(), s), "cudaEventRecord");
    slot.tag = tag;
    queued();
    ++counters_.submitted;
  }

  FinishedFrame wait_oldest() override {
    if (in_flight_ == 0) throw Error("streaming chain: nothing in flight", "submit() first");
    Slot& slot = *slots_[oldest()];
    cuda::check(cudaEventSynchronize(slot.done.get()), "frame (cudaEventSynchronize)");
    oldest_waited_ = true;
    return {const_view(slot.host_out.view()), slot.tag};
  }

  void wait_slot(int index) override {
    cuda::check(cudaEventSynchronize(slots_[index]->done.get()), "frame (cudaEventSynchronize)");
  }

 private:
  struct Slot {
    PinnedFrame host_in;
    PinnedFrame host_out;
    DeviceChainFrames frames;
    cuda::Stream stream;
    cuda::Event done;
    std::uint64_t tag = 0;
  };

  int device_id_;
  std::vector<std::unique_ptr<Slot>> slots_;
  FrameShape shape_;
};

}  // namespace

std::unique_ptr<StreamingChain> make_streaming_chain_cuda(
    std::vector<std::unique_ptr<FilterStage>> stages, int device_id, int depth) {
  return std::make_unique<StreamingChainCuda>(std::move(stages), device_id, depth);
}

}  // namespace starsift
