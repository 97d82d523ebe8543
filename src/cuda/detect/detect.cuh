// SPDX-License-Identifier: LGPL-2.1-or-later
// Detection on a CUDA device: the steps of DetectState (pipeline/detect/reference.hpp) as
// kernels on one stream, with the labelling of labels.cuh in the middle.
//
// Limitations
// | what     | supported                                                                   |
// |----------|-----------------------------------------------------------------------------|
// | input    | GRAY8, GRAY16 (any bit depth), GRAY32F; device memory, any stride             |
// | output   | detect_output_shape(): the input (copied), GRAY16 labels or a GRAY8 overlay   |
// | size     | up to 2^31 / 32 rows of width rounded to 32 (labels.cuh), frames of >= 1 px   |
// | results  | the catalogue: a ResultHeader and up to max_objects DetectedObject records    |
// | lines    | the line channel of any length the parameters allow (5..63)                   |
//
// What agrees with the CPU reference: the mask (the line channel's pixels included), the labels,
// every record's npix, box, peak and its pixel bit for bit, the sums to the rounding of their order
// (doubles). With a background on integer frames (GRAY8, GRAY16) that holds too: the tiles are
// clipped with exact integer sums and blended in float as the reference blends; on float frames the
// tile statistics are double sums, equal to the rounding of their order, so a pixel within a
// rounding of the threshold may fall the other way.
//
// Use: DetectBuffers::allocate() once per shape and parameters (the CUB idiom inside), then
// per frame launch_detect() and launch_detect_catalogue() on the same stream. Nothing is
// allocated or synchronised per frame.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cuda/device_buffer.hpp"
#include "pipeline/detect/params.hpp"
#include "pipeline/image.hpp"
#include "pipeline/pixel_format.hpp"

namespace starsift {
struct LineBank;  // pipeline/detect/line_channel.hpp
}

namespace starsift::cuda {

// Device memory for frames of one shape with one max_objects, sized by allocate().
class DetectBuffers {
 public:
  // `taps`: the detection filter (detect_kernel()), (2 radius + 1)^2 of them, or none; `lines`:
  // the line channel's bank for that filter (make_line_bank(), length 0: off).
  void allocate(const DetectParams& params, const FrameShape& shape, const std::vector<float>& taps,
                int radius, double norm, const LineBank& lines);
  // New parameters for the same buffers (detect_live_change(), the same background, mesh and
  // connectivity): the filter's taps and the line bank.
  void set_filter(const std::vector<float>& taps, int radius, double norm, const LineBank& lines);
  // The line bank alone (a length of 0 frees the line channel's buffers).
  void set_lines(const LineBank& lines);

  struct View;  // the kernels' view of everything (detect_kernels.cu)
  const FrameShape& shape() const noexcept { return shape_; }

 private:
  friend cudaError_t launch_detect(const DetectParams&, DetectBuffers&, ConstImageView, ImageView,
                                   cudaStream_t);
  friend cudaError_t launch_detect_catalogue(const DetectParams&, DetectBuffers&, void*,
                                             cudaStream_t);
  FrameShape shape_;
  int max_objects_ = 0;
  int sm_count_ = 1;  // the device's multiprocessors: sizes the per-component passes' grid
  int tiles_x_ = 0, tiles_y_ = 0, splits_ = 0;
  std::size_t components_ = 0;                       // the most components a frame can have, +1
  Connectivity connectivity_ = Connectivity::Eight;  // what components_ was sized for
  int radius_ = 0;
  double norm_ = 1.0;
  DeviceImage mask_;    // byte per pixel
  DeviceImage labels_;  // uint32 per pixel
  DeviceImage small_;   // tile stats, partial sums, taps, counters (one allocation)
  DeviceImage npix_;    // uint32 per component
  DeviceImage kept_;    // uint32 per component: kept components up to it
  DeviceImage sums_;    // per catalogue record
  DeviceImage merged_;  // per catalogue record: its merged flag (blend.hpp)
  DeviceImage z_;       // float per pixel: Frame::z
  DeviceImage label_scratch_;
  std::size_t label_scratch_bytes_ = 0;
  int line_length_ = 0;  // the line channel: 0 off
  int line_radius_ = 0;
  DeviceImage capped_;     // float per pixel: the significance capped at LineBank::kCap
  DeviceImage line_bank_;  // the taps' offsets in line_kernel's tile, then 1 / each norm
};

// Background, filter, threshold, labels, per-object sums and the output frame of `in` into
// `out` (device views of the configured shape and of detect_output_shape()).
cudaError_t launch_detect(const DetectParams& params, DetectBuffers& buffers, ConstImageView in,
                          ImageView out, cudaStream_t stream);

// The catalogue of the frame launch_detect() queued last, into `result` (device memory of
// ResultLayout::bytes(): header, then the records).
cudaError_t launch_detect_catalogue(const DetectParams& params, DetectBuffers& buffers,
                                    void* result, cudaStream_t stream);

}  // namespace starsift::cuda
