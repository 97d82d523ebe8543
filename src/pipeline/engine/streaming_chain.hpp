// SPDX-License-Identifier: LGPL-2.1-or-later
// The streaming engine: a ring of `depth` frame slots so that successive frames overlap
// (on CUDA: frame k's upload, frame k-1's kernels and frame k-2's download at once, each
// slot on its own stream), with output order equal to input order, always. Depth 1 is the
// same engine with one slot: every frame of every element takes this one path.
//
// A frame comes back with its stages' results (stage_result.hpp), from the slot it ran in:
// on CUDA copied down on the slot's stream after the frame, so reading them waits for
// nothing but the frame. Parameter changes are ordered like frames: update_stage() and
// replace_stage() apply from the next submitted frame on; frames already in flight finish
// with what they started with, and nothing is drained.
//
// Usage (one producer/consumer thread):
//   engine->configure(shape);                 // allocates every slot once
//   while (frames) {
//     if (engine->in_flight() == engine->depth()) { use(engine->wait_oldest()); engine->pop(); }
//     ImageView slot = engine->next_input();  // pinned host memory: fill it, or pass any frame
//     engine->submit(frame_or_slot, tag);
//   }
//   while (engine->in_flight()) { use(engine->wait_oldest()); engine->pop(); }  // drain
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "pipeline/backend.hpp"
#include "pipeline/image.hpp"
#include "pipeline/pixel_format.hpp"
#include "pipeline/stage.hpp"

namespace starsift {

struct StreamingCounters {
  std::uint64_t submitted = 0;
  std::uint64_t completed = 0;     // handed out by pop()
  std::uint64_t dropped = 0;       // in flight when reset() discarded them
  std::uint64_t zero_copy = 0;     // inputs that were the slot's own (pinned) memory
  std::uint64_t copied = 0;        // inputs copied into a slot once
  std::uint64_t held_outputs = 0;  // results written straight into the caller's memory
  // Per stage, in chain order, of the frames handed out: the last one's time and the sum,
  // in milliseconds (CUDA: events around each stage's kernels, on the timed frames only
  // (see set_stage_timing_interval); CPU: wall time, every frame).
  std::vector<double> stage_ms_last;
  std::vector<double> stage_ms_total;
  // CUDA: the last handed-out frame's upload and download times (0 on the CPU).
  double upload_ms_last = 0.0;
  double download_ms_last = 0.0;
  // CUDA: the stages run as one graph per slot (per-stage times then fold into the first).
  bool graphed = false;
  std::uint64_t live_updates = 0;    // parameter changes applied without a drain
  std::uint64_t stage_replaced = 0;  // stages replaced by new ones without a drain
};

// Where a submitted frame's pixels live.
enum class InputMemory {
  Any,         // any host memory: copied into the slot once
  HeldPinned,  // page-locked memory the caller keeps unchanged until the frame is popped:
               // read in place (DMA on CUDA), no copy
};

// Whether a CUDA chain's stages run as one CUDA graph per slot (recorded at configure).
enum class GraphPolicy {
  Auto,    // for frames of at most kGraphAutoPixels (launch-bound) when every stage allows it
  Always,  // whenever every stage allows it
  Never,
};
// Auto's limit: above it the kernels take long enough that launching them one by one costs
// nothing measurable (bench/results/streaming/).
constexpr long long kGraphAutoPixels = 1024 * 1024;

// A stage's result for one handed-out frame.
struct FrameResult {
  std::size_t stage = 0;        // index in the chain
  std::string_view stage_name;  // FilterStage::name()
  ResultLayout layout;
  ConstResultView view;  // host memory, valid until pop()

  const ResultHeader& header() const noexcept {
    return *reinterpret_cast<const ResultHeader*>(view.data);
  }
};

struct FinishedFrame {
  ConstImageView output;                 // valid until pop(); see keeps_frame()
  std::uint64_t tag;                     // what submit() was given
  std::span<const FrameResult> results;  // one per stage that declares a result, in order
};

class StreamingChain {
 public:
  virtual ~StreamingChain() = default;

  virtual Backend backend() const = 0;
  int depth() const noexcept { return depth_; }
  int in_flight() const noexcept { return in_flight_; }
  const StreamingCounters& counters() const noexcept { return counters_; }

  // Allocates `depth` slots for frames of `shape` (after waiting for any in flight, which
  // are dropped and counted). Throws Error.
  virtual void configure(const FrameShape& shape) = 0;
  // Takes effect at the next configure(). CPU engines ignore it.
  void set_graph_policy(GraphPolicy policy) noexcept { graph_policy_ = policy; }
  // CUDA: per-stage, upload and download times come from events recorded around every
  // stage of one frame in `interval` (0: never). Timing events between the copies cost
  // overlap (4096² GRAY16 at depth 3: 78 % of the transfer bound timing every frame, 93 %
  // timing none; bench/results/streaming/), so by default one frame in 16 is timed; the
  // others record one event. Takes effect at the next submit().
  void set_stage_timing_interval(int interval) noexcept { timing_interval_ = interval; }
  // The frames the chain hands out (the input's shape unless a stage converts).
  const FrameShape& output_shape() const noexcept { return output_shape_; }
  // True when every stage keeps its frame (FilterStage::keeps_frame()): each frame handed out
  // is then the one submitted, unchanged (FinishedFrame::output views the caller's held frame
  // or the slot's copy of it), nothing is written for it and, on CUDA, nothing downloaded;
  // `held_output` is not used. Set by configure().
  bool keeps_frame() const noexcept { return keeps_frame_; }
  // The next slot's input memory (pinned on CUDA): a frame written there is submitted
  // without a copy.
  virtual ImageView next_input() = 0;
  // Queues a frame. Requires in_flight() < depth(). The slot's own next_input() memory and
  // InputMemory::HeldPinned frames are not copied (counted as zero-copy). `held_output`,
  // when given, is page-locked memory of output_shape() that the caller keeps until the
  // frame is popped: the result is written there (DMA on CUDA) instead of into the slot, so
  // nothing is copied on the way out either. Throws Error.
  virtual void submit(ConstImageView in, std::uint64_t tag, InputMemory memory = InputMemory::Any,
                      ImageView held_output = {}) = 0;
  // Waits for the oldest queued frame (requires in_flight() > 0). Throws Error.
  virtual FinishedFrame wait_oldest() = 0;
  // Releases the oldest frame's slot after wait_oldest().
  void pop();
  // Waits for everything queued and discards it (a flush), counted as dropped; stages with
  // history start a new one.
  void reset();

  // The stages, in order (for reading their names and parameters; change them only through
  // update_stage()).
  const FilterStage& stage(std::size_t index) const { return *stages_.at(index); }
  std::size_t size() const noexcept { return stages_.size(); }

  // Applies `change` to stage `index` before the next submitted frame reaches it: frames in
  // flight finish with the stage as it was (CPU: the worker applies it between frames; CUDA:
  // the launches queued already carry their arguments). `change` must keep the stage's
  // output shape, keeps_frame() and result layout. An exception from `change` fails the next
  // frame (CPU) or this call (CUDA); validate first.
  void update_stage(std::size_t index, std::function<void(FilterStage&)> change);
  // Replaces stage `index` by `stage` (another filter, same output shape, keeps_frame() and
  // result layout) from the next submitted frame on, configured here for what the running one
  // receives. Throws Error, leaving the chain as it was, when `stage` does not fit.
  void replace_stage(std::size_t index, std::unique_ptr<FilterStage> stage);

 protected:
  StreamingChain(std::vector<std::unique_ptr<FilterStage>> stages, int depth);
  void check_submit(ConstImageView in, ImageView held_output) const;
  // Configures the stages for `shape` (device-resident when `device`), sizes the per-stage
  // counters and returns the shapes between stages.
  std::vector<FrameShape> configure_stages(const FrameShape& shape, bool device);
  // Adds a handed-out frame's per-stage times to the counters.
  void count_stage_times(const double* stage_ms);
  // Blocks until slot `index`'s frame is done.
  virtual void wait_slot(int index) = 0;
  // A change for the stages before the next frame; CPU engines run it on their worker.
  virtual void schedule(std::function<void()> edit) = 0;
  // Places the stages' results in one area per slot (results_, result_bytes_).
  void plan_results();
  // Builds the handed-out view of a slot's host result area at `base`.
  void describe_results(const std::byte* base, std::vector<FrameResult>& out) const;
  // Writes the engine's side of the results in a slot's host area (fixed layouts' headers).
  void finish_results(std::byte* base) const noexcept;
  // Slot index of the oldest frame and of the next free slot.
  int oldest() const noexcept { return head_; }
  int next_free() const noexcept { return (head_ + in_flight_) % depth_; }
  void queued() noexcept { ++in_flight_; }

  std::vector<std::unique_ptr<FilterStage>> stages_;
  std::vector<FrameShape> shapes_;  // [i]: stage i's input; back(): the chain's output
  std::vector<ResultPlacement> results_;
  std::size_t result_bytes_ = 0;  // one slot's result area
  bool device_ = false;           // the stages are configured for device frames
  int depth_;
  int head_ = 0;
  int in_flight_ = 0;
  bool oldest_waited_ = false;
  StreamingCounters counters_;
  FrameShape input_shape_;
  FrameShape output_shape_;
  bool keeps_frame_ = false;
  GraphPolicy graph_policy_ = GraphPolicy::Auto;
  int timing_interval_ = 16;
};

constexpr int kMaxStreamingDepth = 8;

// `depth` frames in flight, 1..kMaxStreamingDepth. Frames reach the stages in submission
// order; a stage with state across frames orders its updates itself (see FilterStage).
// Throws Error.
std::unique_ptr<StreamingChain> make_streaming_chain(
    std::vector<std::unique_ptr<FilterStage>> stages, const BackendChoice& choice, int depth);

#if STARSIFT_HAVE_CUDA
std::unique_ptr<StreamingChain> make_streaming_chain_cuda(
    std::vector<std::unique_ptr<FilterStage>> stages, int device_id, int depth);
#endif

}  // namespace starsift
