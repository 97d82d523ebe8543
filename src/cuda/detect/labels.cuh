// SPDX-License-Identifier: LGPL-2.1-or-later
// CUDA connected-component labelling of a detection mask (the contract: labels.hpp).
//
// Limitations
// | what         | supported                                                              |
// |--------------|------------------------------------------------------------------------|
// | mask         | one byte per pixel, non-zero is foreground; any stride >= width        |
// | labels       | uint32 per pixel, stride >= width elements; padding is never written   |
// | connectivity | 4 and 8                                                                |
// | image size   | any >= 0 x 0 with height * round_up(width, 32) <= 2^31                 |
// | in-place     | no: mask, labels, count and scratch must not overlap                   |
// | memory       | device memory, all of them                                             |
//
// Results are bit-identical to label_reference(): 0 for background (or, with
// LabelBackground::Keep, 0 or the label the buffer held), components numbered
// 1, 2, 3, ... in raster order of their first pixel. The number of components goes to a device
// word, so a later stage can size its work without a round trip to the host.
//
// Use (the CUB idiom): label_scratch_bytes() once for the largest frame, allocate that much
// device memory once, then launch_labels() per frame. The launcher allocates nothing, never
// synchronises, and returns the status of its launches (cudaPeekAtLastError).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "pipeline/detect/labels.hpp"

namespace starsift::cuda {

// Device memory the launcher works in: at least label_scratch_bytes(width, height) bytes,
// 4-byte aligned at least (cudaMalloc's 256 bytes is best: the sub-buffers are 256-byte
// multiples from its start). Its contents need no clearing between calls.
struct LabelScratch {
  void* data = nullptr;
  std::size_t bytes = 0;
};

// How the union-find is organised. Auto picks per connectivity; the named ones exist so tests
// and benchmarks can run each one. (A tree node per 2x2 block for 8 connectivity, BKE after
// Allegretti, Bolelli & Grana 2020, would be the next: a quarter of the nodes and unions, but
// its root is no longer the component's first pixel, so numbering needs a first-pixel pass.)
enum class LabelSchedule {
  Auto,
  // One tree node per pixel: 32x32 tiles united in shared memory, tile borders united in global
  // memory with atomicMin (Playne & Hawick 2018's block union-find). 4 and 8 connectivity.
  Pixel,
};

std::string_view to_string(LabelSchedule schedule) noexcept;

// Whether `schedule` can label with `connectivity`.
bool label_schedule_supports(LabelSchedule schedule, Connectivity connectivity) noexcept;

// What the background's labels become: 0, or (Keep) each either 0 or left as the buffer held
// it, for a caller that reads labels only where the mask is set (detection): on a sparse mask
// most of the labels' bytes are background, and the pass then writes only the groups of 4
// pixels that hold a foreground one (their background pixels get 0).
enum class LabelBackground { Zero, Keep };

// Bytes of scratch launch_labels() needs for frames up to width x height (any schedule); 0 for
// a size outside the limitations above.
std::size_t label_scratch_bytes(int width, int height);

// Labels `mask` into `labels` and writes the number of components to `*count` (device memory;
// may be null when not wanted). Returns cudaErrorInvalidValue, before launching anything, for
// sizes, strides or scratch outside the limitations above or a schedule that does not support
// `connectivity`.
cudaError_t launch_labels(const std::uint8_t* mask, std::ptrdiff_t mask_stride, int width,
                          int height, Connectivity connectivity, std::uint32_t* labels,
                          std::ptrdiff_t label_stride, std::uint32_t* count, LabelScratch scratch,
                          cudaStream_t stream, LabelSchedule schedule = LabelSchedule::Auto,
                          LabelBackground background = LabelBackground::Zero);

}  // namespace starsift::cuda
