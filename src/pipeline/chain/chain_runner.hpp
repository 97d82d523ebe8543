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
  // Runs every stage on one host frame; `out` is complete on return. Throws Error.
  virtual void process(ConstImageView in, ImageView out) = 0;

 protected:
  explicit ChainRunner(std::vector<std::unique_ptr<FilterStage>> stages);
  std::vector<std::unique_ptr<FilterStage>> stages_;
  ChainStats stats_;
};

// Runs `stages` in order on host frames, `in` to `out`, through `scratch` (at least
// min(stages - 1, 2) frames of the same shape). `stage_ms`, when given, receives each
// stage's wall time. The CPU chain and the CPU streaming engine both run frames this way.
void run_stages_on_host(const std::vector<std::unique_ptr<FilterStage>>& stages, ConstImageView in,
                        ImageView out, std::vector<HostFrame>& scratch, double* stage_ms = nullptr);
// Allocates the scratch frames run_stages_on_host() needs for `stages` stages.
void allocate_host_scratch(std::size_t stages, const FrameShape& shape,
                           std::vector<HostFrame>& scratch);

// Takes ownership of `stages` (at least one, all built for `choice`). Throws Error.
std::unique_ptr<ChainRunner> make_chain_runner(std::vector<std::unique_ptr<FilterStage>> stages,
                                               const BackendChoice& choice);

#if STARSIFT_HAVE_CUDA
std::unique_ptr<ChainRunner> make_chain_runner_cuda(
    std::vector<std::unique_ptr<FilterStage>> stages, int device_id);
#endif

}  // namespace starsift
