// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/engine/streaming_chain.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "pipeline/engine/host_chain.hpp"
#include "pipeline/engine/stage_shapes.hpp"
#include "pipeline/error.hpp"

namespace starsift {

StreamingChain::StreamingChain(std::vector<std::unique_ptr<FilterStage>> stages, int depth)
    : stages_(std::move(stages)), depth_(depth) {
  if (stages_.empty()) throw Error("a chain needs at least one stage", "one or more stages");
  if (depth < 1 || depth > kMaxStreamingDepth) {
    throw Error("depth " + std::to_string(depth) + " is out of range",
                "1.." + std::to_string(kMaxStreamingDepth));
  }
}

namespace {

std::string describe(int width, int height, PixelFormat format) {
  return std::to_string(width) + "x" + std::to_string(height) + " " +
         std::string(to_string(format));
}

}  // namespace

void StreamingChain::check_submit(ConstImageView in, ImageView held_output) const {
  if (in_flight_ >= depth_) {
    throw Error("streaming chain: submit with all " + std::to_string(depth_) + " slots in flight",
                "wait_oldest() and pop() first");
  }
  const FrameShape& shape = input_shape_;
  if (in.width != shape.width || in.height != shape.height || in.format != shape.format) {
    throw Error("streaming chain: frame " + describe(in.width, in.height, in.format) +
                    " differs from the configured shape",
                describe(shape.width, shape.height, shape.format));
  }
  const FrameShape& out = output_shape_;
  if (held_output.data != nullptr &&
      (held_output.width != out.width || held_output.height != out.height ||
       held_output.format != out.format)) {
    throw Error("streaming chain: output frame " +
                    describe(held_output.width, held_output.height, held_output.format) +
                    " differs from the chain's output",
                describe(out.width, out.height, out.format));
  }
}

std::vector<FrameShape> StreamingChain::configure_stages(const FrameShape& shape, bool device) {
  shapes_.clear();
  std::vector<FrameShape> shapes = configure_stage_shapes(stages_, shape, device);
  shapes_ = shapes;
  device_ = device;
  input_shape_ = shapes.front();
  output_shape_ = shapes.back();
  keeps_frame_ = std::all_of(stages_.begin(), stages_.end(),
                             [](const auto& stage) { return stage->keeps_frame(); });
  counters_.stage_ms_last.assign(stages_.size(), 0.0);
  counters_.stage_ms_total.resize(stages_.size(), 0.0);
  plan_results();
  return shapes;
}

void StreamingChain::plan_results() {
  results_.clear();
  result_bytes_ = 0;
  for (std::size_t i = 0; i < stages_.size(); ++i) {
    const std::optional<ResultLayout> layout = stages_[i]->result_layout();
    if (!layout) continue;
    results_.push_back({i, *layout, result_bytes_});
    // Each area starts aligned like its records.
    const std::size_t bytes = layout->bytes();
    result_bytes_ +=
        (bytes + kResultRecordsOffset - 1) / kResultRecordsOffset * kResultRecordsOffset;
  }
}

void StreamingChain::describe_results(const std::byte* base, std::vector<FrameResult>& out) const {
  out.clear();
  for (const ResultPlacement& r : results_) {
    out.push_back({r.stage, stages_[r.stage]->name(), r.layout,
                   ConstResultView{base + r.offset, r.layout.bytes()}});
  }
}

void StreamingChain::finish_results(std::byte* base) const noexcept {
  for (const ResultPlacement& r : results_) {
    if (!r.layout.fixed) continue;
    auto* header = reinterpret_cast<ResultHeader*>(base + r.offset);
    header->count = r.layout.capacity;
    header->overflow = 0;
  }
}

namespace {

bool same_layout(const std::optional<ResultLayout>& a, const std::optional<ResultLayout>& b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  return a->kind == b->kind && a->record_bytes == b->record_bytes && a->capacity == b->capacity &&
         a->fixed == b->fixed;
}

}  // namespace

void StreamingChain::update_stage(std::size_t index, std::function<void(FilterStage&)> change) {
  if (index >= stages_.size()) {
    throw Error("streaming chain: no stage " + std::to_string(index),
                "0.." + std::to_string(stages_.size() - 1));
  }
  schedule([this, index, change = std::move(change)] { change(*stages_[index]); });
  ++counters_.live_updates;
}

void StreamingChain::replace_stage(std::size_t index, std::unique_ptr<FilterStage> stage) {
  if (index >= stages_.size()) {
    throw Error("streaming chain: no stage " + std::to_string(index),
                "0.." + std::to_string(stages_.size() - 1));
  }
  const FilterStage& running = *stages_[index];
  if (!same_layout(running.result_layout(), stage->result_layout())) {
    throw Error("streaming chain: stage '" + std::string(stage->name()) +
                    "' hands back another result than '" + std::string(running.name()) + "'",
                "a stage with the same result (else a new chain)");
  }
  if (stage->keeps_frame() != running.keeps_frame()) {
    throw Error(
        "streaming chain: stage '" + std::string(stage->name()) +
            (stage->keeps_frame() ? "' keeps its frame where '" : "' writes a frame where '") +
            std::string(running.name()) + "' does not",
        "a stage that keeps or writes frames as the running one does (else a new chain)");
  }
  if (!shapes_.empty()) {
    const FrameShape& in = shapes_[index];
    if (device_) {
      stage->configure_device(in);
    } else {
      stage->configure(in);
    }
    if (stage->output_shape(in) != shapes_[index + 1]) {
      throw Error("streaming chain: stage '" + std::string(stage->name()) +
                      "' writes other frames than '" + std::string(running.name()) + "'",
                  "a stage with the same output (else a new chain)");
    }
  }
  // std::function needs a copyable callable: the stage travels in a shared holder.
  auto holder = std::make_shared<std::unique_ptr<FilterStage>>(std::move(stage));
  schedule([this, index, holder] {
    std::swap(stages_[index], *holder);  // the old stage goes with the holder
  });
  ++counters_.stage_replaced;
}

void StreamingChain::count_stage_times(const double* stage_ms) {
  for (std::size_t i = 0; i < stages_.size(); ++i) {
    counters_.stage_ms_last[i] = stage_ms[i];
    counters_.stage_ms_total[i] += stage_ms[i];
  }
}

void StreamingChain::reset() {
  while (in_flight_ > 0) {
    wait_slot(oldest());
    head_ = (head_ + 1) % depth_;
    --in_flight_;
    ++counters_.dropped;
  }
  oldest_waited_ = false;
  for (auto& stage : stages_) stage->reset_state();
}

void StreamingChain::pop() {
  if (in_flight_ == 0 || !oldest_waited_) {
    throw Error("streaming chain: pop() without a finished frame", "wait_oldest() first");
  }
  head_ = (head_ + 1) % depth_;
  --in_flight_;
  oldest_waited_ = false;
  ++counters_.completed;
}

namespace {

void copy_frame(ConstImageView from, ImageView to) {
  for (int y = 0; y < from.height; ++y) std::memcpy(to.row(y), from.row(y), from.row_bytes());
}

// The CPU backend: at depth >= 2 one worker runs the queued frames in order (each stage
// itself uses the CPU's threads), so the caller's thread fills and drains while the worker
// filters; at depth 1 the frame runs in submit(), on the caller's thread, with no hand-over.
class StreamingChainCpu final : public StreamingChain {
 public:
  StreamingChainCpu(std::vector<std::unique_ptr<FilterStage>> stages, int depth)
      : StreamingChain(std::move(stages), depth) {
    for (const auto& s : stages_) {
      if (s->backend() != Backend::Cpu) {
        throw Error("streaming chain: stage '" + std::string(s->name()) + "' is not a CPU stage",
                    "every stage on the chain's backend");
      }
    }
    if (depth_ > 1) worker_ = std::thread([this] { work(); });
  }

  ~StreamingChainCpu() override {
    if (!worker_.joinable()) return;
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    worker_.join();
  }

  Backend backend() const override { return Backend::Cpu; }

  void configure(const FrameShape& shape) override {
    reset();
    run_edits(pending_);  // changes made before the first frame apply to the new stages
    const std::vector<FrameShape> shapes = configure_stages(shape, false);
    slots_.assign(static_cast<std::size_t>(depth_), Slot{});
    for (auto& slot : slots_) {
      slot.input.allocate(shapes.front());
      slot.output.allocate(keeps_frame_ ? FrameShape{} : shapes.back());  // none to take
      slot.frames.allocate(shapes);
      slot.stage_ms.assign(stages_.size(), 0.0);
      slot.results.assign(result_bytes_, std::byte{0});
      describe_results(slot.results.data(), slot.handed_results);
    }
  }

  ImageView next_input() override { return slots_.at(next_free()).input.view; }

  void submit(ConstImageView in, std::uint64_t tag, InputMemory memory,
              ImageView held_output) override {
    check_submit(in, held_output);
    const int index = next_free();
    Slot& slot = slots_[index];
    if (in.data == slot.input.view.data || memory == InputMemory::HeldPinned) {
      slot.source = in;  // read in place
      ++counters_.zero_copy;
    } else {
      copy_frame(in, slot.input.view);
      slot.source = const_view(slot.input.view);
      ++counters_.copied;
    }
    if (keeps_frame_) {
      slot.target = kept_frame_out(slot.source);  // handed back as it came; nothing writes it
    } else {
      slot.target = held_output.data != nullptr ? held_output : slot.output.view;
      if (held_output.data != nullptr) ++counters_.held_outputs;
    }
    slot.tag = tag;
    slot.edits.swap(pending_);  // the changes made since the last frame go first
    pending_.clear();
    if (!worker_.joinable()) {
      run(slot);
    } else {
      {
        std::lock_guard lock(mutex_);
        slot.done = false;
        slot.error = nullptr;
        queue_.push_back(index);
      }
      wake_.notify_all();
    }
    queued();
    ++counters_.submitted;
  }

  FinishedFrame wait_oldest() override {
    if (in_flight_ == 0) throw Error("streaming chain: nothing in flight", "submit() first");
    Slot& slot = slots_[oldest()];
    wait_slot(oldest());
    if (slot.error) std::rethrow_exception(slot.error);
    oldest_waited_ = true;
    count_stage_times(slot.stage_ms.data());
    return {const_view(slot.target), slot.tag, slot.handed_results};
  }

  void wait_slot(int index) override {
    if (!worker_.joinable()) return;  // depth 1: done in submit()
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return slots_[index].done; });
  }

 private:
  struct Slot {
    HostFrame input;
    ConstImageView source;  // what the worker reads: the slot's input or the caller's frame
    HostFrame output;
    ImageView target;  // where the result goes: `output` or the caller's held memory
    HostChainFrames frames;
    std::vector<double> stage_ms;
    std::vector<std::byte> results;            // the stages' result areas
    std::vector<FrameResult> handed_results;   // views of them, built at configure
    std::vector<std::function<void()>> edits;  // stage changes to apply before the frame
    std::uint64_t tag = 0;
    bool done = true;
    std::exception_ptr error;
  };

  void schedule(std::function<void()> edit) override { pending_.push_back(std::move(edit)); }

  static void run_edits(std::vector<std::function<void()>>& edits) {
    for (auto& edit : edits) edit();
    edits.clear();
  }

  // The slot's changes, then its frame. Errors stay with the slot's frame.
  void run(Slot& slot) noexcept {
    std::exception_ptr error;
    try {
      run_edits(slot.edits);
      slot.frames.run(stages_, slot.source, slot.target, slot.results.data(), results_,
                      slot.stage_ms.data());
      finish_results(slot.results.data());
    } catch (...) {
      slot.edits.clear();
      error = std::current_exception();
    }
    std::lock_guard lock(mutex_);
    slot.error = error;
    slot.done = true;
  }

  void work() {
    for (;;) {
      int index;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (stopping_) return;
        index = queue_.front();
        queue_.pop_front();
      }
      run(slots_[index]);
      done_.notify_all();
    }
  }

  std::vector<Slot> slots_;
  std::vector<std::function<void()>> pending_;  // changes for the next submitted frame
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::deque<int> queue_;
  bool stopping_ = false;
  std::thread worker_;  // depth >= 2 only
};

}  // namespace

std::unique_ptr<StreamingChain> make_streaming_chain(
    std::vector<std::unique_ptr<FilterStage>> stages, const BackendChoice& choice, int depth) {
  switch (choice.backend) {
    case Backend::Cpu:
      return std::make_unique<StreamingChainCpu>(std::move(stages), depth);
    case Backend::Cuda:
#if STARSIFT_HAVE_CUDA
      return make_streaming_chain_cuda(std::move(stages), choice.device_id, depth);
#else
      throw Error("streaming chain: the CUDA backend was chosen but this build has none", "cpu");
#endif
    case Backend::Auto:
      break;
  }
  throw Error("streaming chain: backend must be resolved first", "cuda, cpu");
}

}  // namespace starsift
