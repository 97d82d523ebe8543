// Runs a chain of filter stages over whole frames: on the CPU stage by stage through two
// scratch frames, on CUDA in one GPU pass (one upload, every stage on device memory, one
// download). Buffers are allocated in configure(), never per frame.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "pipeline/backend.hpp"
#include "pipeline/host_frame.hpp"
#include "pipeline/image.hpp"
#include "pipeline/pixel_format.hpp"
#include "pipeline/stage.hpp"

namespace starsift {

struct ChainStats {
  std::uint64_t frames = 0;
  // Per stage, in chain order: the last frame's time and the sum over all frames, in
  // milliseconds (CUDA: events around each stage's kernels; CPU: wall time).
  std::vector<double> stage_ms_last;
  std::vector<double> stage_ms_total;
  // CUDA: the last frame's upload and download times (0 on the CPU).
  double upload_ms_last = 0.0;
  double download_ms_last = 0.0;
};

class ChainRunner {
 public:
  virtual ~ChainRunner() = default;

  virtual Backend backend() const = 0;
  std::size_t size() const noexcept { return stages_.size(); }
  const FilterStage& stage(std::size_t i) const { return *stages_[i]; }
  const ChainStats& stats() const noexcept { return stats_; }

  // Validates `shape` for every stage and allocates all buffers. Throws Error.
  virtual void configure(const FrameShape& shape) = 0;
  // The frames process() writes (the input's shape unless a stage converts). After configure().
  const FrameShape& output_shape() const noexcept { return output_shape_; }
  // Runs every stage on one host frame; `out` is complete on return. Throws Error.
  virtual void process(ConstImageView in, ImageView out) = 0;

 protected:
  explicit ChainRunner(std::vector<std::unique_ptr<FilterStage>> stages);
  std::vector<std::unique_ptr<FilterStage>> stages_;
  ChainStats stats_;
  FrameShape output_shape_;
};

// The host side of a chain, shared by the CPU chain and the CPU streaming engine: stage i
// reads one scratch frame and writes the other, the first reads the input, the last writes
// the output. Allocated once per shape.
class HostChainFrames {
 public:
  // Scratch for the intermediates between the stages whose shapes are `shapes` (as
  // configure_stage_shapes() returned them).
  void allocate(const std::vector<FrameShape>& shapes);
  // Runs `stages` on `in` (shapes.front()) into `out` (shapes.back()). `stage_ms`, when
  // given, receives each stage's wall time.
  void run(const std::vector<std::unique_ptr<FilterStage>>& stages, ConstImageView in,
           ImageView out, double* stage_ms = nullptr);

 private:
  std::vector<FrameShape> shapes_;
  HostFrame scratch_[2];
};

// Takes ownership of `stages` (at least one, all built for `choice`). Throws Error.
std::unique_ptr<ChainRunner> make_chain_runner(std::vector<std::unique_ptr<FilterStage>> stages,
                                               const BackendChoice& choice);

#if STARSIFT_HAVE_CUDA
std::unique_ptr<ChainRunner> make_chain_runner_cuda(
    std::vector<std::unique_ptr<FilterStage>> stages, int device_id);
#endif

}  // namespace starsift
