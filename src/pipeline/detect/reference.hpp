// SPDX-License-Identifier: LGPL-2.1-or-later
// Detection on the CPU, step by step as docs/detect.md describes it: the background and noise
// of each pixel, the filtered significance, the threshold mask, connected components, the
// statistics of each object and the catalogue. The CUDA stage is a schedule of the same steps.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "pipeline/detect/catalogue.hpp"
#include "pipeline/detect/line_channel.hpp"
#include "pipeline/detect/object_sums.hpp"
#include "pipeline/detect/params.hpp"
#include "pipeline/image.hpp"
#include "pipeline/plane.hpp"
#include "pipeline/thread_pool.hpp"

namespace starsift {

// The taps of the detection filter, row-major on a (2 radius + 1)^2 stamp, summing to 1;
// empty for filter: none.
struct DetectKernel {
  int radius = 0;
  std::vector<float> taps;
  double norm = 1.0;  // sqrt(sum of taps^2): the filtered noise over the pixel noise
};
DetectKernel detect_kernel(const DetectParams& params);

// Sigma-clipped mean and standard deviation of the finite values (kClipRounds rounds at
// kClipSigma); {0, 0} when there are none.
struct ClippedStats {
  double mean = 0.0;
  double sigma = 0.0;
};
ClippedStats clipped_stats(std::vector<float>& values);

// A tile with no spread (a constant or saturated region) would make every pixel above it
// significant: sigma never goes below 1e-3 of the largest tile's (1e-6 when all are 0).
double detect_sigma_floor(std::span<const ClippedStats> grid);

// How many objects a frame gave, and how many of them did not fit the catalogue.
struct DetectCounts {
  std::uint32_t objects = 0;   // records written
  std::uint32_t overflow = 0;  // objects beyond max_objects (not written)
};

class DetectState {
 public:
  // Allocates every buffer for frames of `shape` (validated).
  DetectState(const DetectParams& params, const FrameShape& shape);

  const DetectParams& params() const noexcept { return params_; }
  const FrameShape& shape() const noexcept { return shape_; }
  // Parameters that keep the buffers (detect_live_change()); validated.
  void set_params(const DetectParams& params);

  // Detects in `in`: writes `out` (detect_output_shape()) and up to max_objects records.
  DetectCounts process(ConstImageView in, ImageView out, std::span<DetectedObject> records,
                       ThreadPool& pool);

  // The last frame's intermediate planes, for tests and pictures.
  const Plane& background() const noexcept { return background_; }
  const Plane& sigma() const noexcept { return sigma_; }
  const Plane& significance() const noexcept { return significance_; }
  const std::vector<std::uint32_t>& labels() const noexcept { return labels_; }

 private:
  void load(ConstImageView in, ThreadPool& pool);
  void estimate_background(ThreadPool& pool);
  void filter_and_threshold(ThreadPool& pool);
  DetectCounts measure(std::span<DetectedObject> records);
  // blend_merged_[c]: whether component c (of `components`, labels_ not yet renumbered) is
  // merged (blend.hpp), from the peaks measure() collects with the sums.
  void mark_blends(std::uint32_t components);
  // z of pixel (x, y) (blend.hpp): the value above the background over its noise, or the value
  // above the background in absolute mode.
  float blend_z(int x, int y) const;
  void write_output(ConstImageView in, ImageView out, std::span<const DetectedObject> records);

  DetectParams params_;
  FrameShape shape_;
  DetectKernel kernel_;
  LineChannel lines_;   // the line channel (params_.line_length > 0)
  Plane value_;         // the input as float, non-finite samples 0
  Plane background_;    // per pixel
  Plane sigma_;         // per pixel
  Plane significance_;  // filtered (value - background), in sigma (or absolute) units
  Plane residual_;      // value - background: the filter's input, the sums' and the overlay's
  std::vector<std::uint8_t> mask_;
  std::vector<std::uint32_t> labels_;
  std::vector<std::uint32_t> parent_;  // label_reference()'s scratch
  std::vector<ObjectSums> sums_;
  std::vector<std::uint32_t> dense_;  // component id -> catalogue id (0: dropped)
  struct BlendPeak {
    std::uint32_t component;
    int x, y;
    float z;
  };
  std::vector<BlendPeak> blend_peaks_;      // every object's peaks (blend.hpp)
  std::vector<std::uint8_t> blend_merged_;  // per component
  std::vector<float> tile_values_;          // the background's clipping scratch
  std::vector<ClippedStats> grid_;          // the background's tiles
  std::vector<float> tile_mean_;            // grid_ rounded to float: what the blend reads
  std::vector<float> tile_sigma_;
  std::vector<int> col_tile_;  // each column's place in the mesh (mesh_locate())
  std::vector<float> col_weight_;
};

}  // namespace starsift
