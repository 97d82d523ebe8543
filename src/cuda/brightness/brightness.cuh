// SPDX-License-Identifier: LGPL-2.1-or-later
// CUDA launcher of the adaptive brightness correction (pipeline/brightness/params.hpp), on
// device frames; reference.hpp's steps, on `stream`. Mode local:
//
// | kernel       | reads          | writes                   | what                            |
// |--------------|----------------|--------------------------|---------------------------------|
// | luminance    | the frame      | Y (float plane, scratch) | step 1, bit for bit the         |
// |              |                |                          | reference's Y                   |
// | launch_gauss | Y              | B (float plane, scratch) | sigma on both axes, reflect-101 |
// | histogram    | the frame, B   | the histogram (scratch)  | percentile only: v rounded to a |
// |              |                |                          | sensor value, one bin each      |
// | select       | the histogram  | lo, hi (scratch)         | percentile only: one block      |
// | correct      | the frame, B   | the output frame         | steps 2-5: v, the stretch, the  |
// |              |                |                          | samples (Y and v recomputed)    |
//
// Outside the blur that moves 4 b + 12 bytes per pixel of b bytes with the percentile stretch
// (3 b + 8 without), where a copy moves 2 b: bench/README.md (starsift-bench-brightness).
//
// Mode clahe: launch_clahe (clahe.cuh) maps the frame (grey; samples above the bit depth's
// maximum count in its top bin, as the reference clamps them) or colour's luma rounded to
// 8 bits (a kernel of its own writes that GRAY8 plane) into a plane of the scratch,
// clahe_reference()'s values bit for bit; the histogram and correct kernels then read C as
// the mapped value over the plane's maximum where mode local reads B.
//
// The histogram (percentile stretch): one bin per sensor value (2^bit_depth bins; 256 for
// GRAY8 and colour). Up to 4096 bins (8-bit, colour, GRAY16 up to 12 bits) each block counts
// into a histogram of its own in shared memory, added to the global one at its end (its bins
// that are not 0); above (GRAY16 of 13..16 bits), straight into the global histogram with
// atomics aggregated over the lanes of a warp that hold the same value (a sky's background
// fills a few bins, which plain atomics would serialise on). GRAY32F has no sensor values:
// the rank-th value is found exactly by two rounds of 16-bit radix selection (a histogram of
// the high 16 bits of v's float bits, then of the low 16 bits among v of the chosen high
// bits), each a pass over the frame. The selection is brightness_percentile_rank()'s: lo (hi)
// is the smallest value with at least rank(low (high)) values at or below it, as the reference
// takes it from its sorted values; on integer formats lo and hi are the reference's whenever
// every v rounds to the same sensor value as the reference's v (always for strength 0 or
// alpha 0, where v is the reference's v exactly).
//
// Accuracy against brightness_reference() (tests/brightness/test_brightness_cuda.cpp;
// brightness_pixel.hpp has the arithmetic), on v before the stretch, which multiplies it by
// its scale (and a colour channel by up to 1 / kLumaB of its pixel's luma):
//  - with the blur's exact sums (launch_gauss's fused path, which Auto takes up to sigma 4, or
//    `blur` Separable at any sigma): within 1e-5 of the range (the power in float, the blur's
//    float sums in another order), so an integer sample within 1 where v lands that close to
//    a rounding boundary;
//  - beyond sigma 4 Auto blurs by the recursion, whose B differs from the exact blur's by up
//    to 2.5e-4 of Y's range (1.4e-4 measured for the CPU's recursion at a 0.1..0.9 step, the
//    GPU's within 5e-5 of it; 2e-5 on noise, less on a sky), which moves v by up to
//    0.51 strength times that (dC/dB <= 2 ln 2 strength / e): integer samples within
//    1 + 1.3e-4 strength max counts (8 bits: 1; 12 bits: 1 at strength 1; 16 bits: 9),
//    GRAY32F within 1.4e-4 strength.
//  - mode clahe: the mapped plane is the reference's, so v is within float rounding of the
//    reference's and integer samples within 1 (rare flips).
// The CPU's fast path (BrightnessCpu) downsamples the blur and differs from both by more.
//
// Limitations
// | what        | supported                                                            |
// |-------------|----------------------------------------------------------------------|
// | modes       | local; clahe (launch_clahe) on GRAY8, GRAY16_LE and colour           |
// | formats     | GRAY8, GRAY16_LE (bit depth 1..16), GRAY32F, RGBA/BGRA/RGBx/BGRx     |
// |             | (byte 3 copied)                                                      |
// | image size  | any >= 1x1 up to 2^32 - 1 pixels (the histogram's counts)            |
// | strides     | >= row bytes; data and strides multiples of the pixel's word: 2 bytes |
// |             | GRAY16, 4 GRAY32F and colour. Multiples of 4 pixels' bytes (16 for    |
// |             | colour) take vector loads and stores, others a pixel at a time       |
// | in-place    | no: `in` and `out` must not overlap                                  |
// | memory      | device memory: the views and the scratch                             |
//
// The launcher allocates nothing, never synchronises, and returns the launch status
// (cudaPeekAtLastError). Scratch: brightness_scratch_bytes(), allocated once by the caller for
// a frame size.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "cuda/gauss/gauss.cuh"
#include "pipeline/brightness/params.hpp"
#include "pipeline/image.hpp"
#include "pipeline/pixel_format.hpp"

namespace starsift::cuda {

// What the percentile stretch found, left in the scratch (device memory) by launch_brightness
// with stretch percentile: the correction maps v to (v - lo) scale. Not written by the other
// stretches.
struct BrightnessStretchRange {
  float lo = 0.0f;     // low when high > low, else 0 (no stretch)
  float scale = 1.0f;  // max / (high - low) when high > low, else 1
  float low = 0.0f;    // the values of rank low_percentile and high_percentile, in the
  float high = 0.0f;   // format's units
  // GRAY32F: the high 16 bits of low's and high's float bits, and their ranks among the
  // values with those high bits (the first round of the selection).
  std::uint32_t prefix[2] = {0, 0};
  std::uint32_t residual[2] = {0, 0};
};

// Bytes of device scratch launch_brightness needs for frames of `shape` with `params`: the
// range and histograms of the stretch, then for mode local the Y and B planes and
// launch_gauss's scratch for any path (so sigma may change freely), for mode clahe the mapped
// plane, colour's 8-bit luma and clahe_scratch_bytes() (which grows with the grid and the
// bit depth).
std::size_t brightness_scratch_bytes(const BrightnessParams& params,
                                     const FrameShape& shape) noexcept;

// Where the percentile stretch's range lies in `scratch` (a device pointer): at its start, for
// any parameters.
const BrightnessStretchRange* brightness_stretch_range(const void* scratch) noexcept;

// Corrects `in` into `out` (both of `shape`: size, format; the bit depth sets the maximum) on
// `stream`. `scratch` holds at least brightness_scratch_bytes(params, shape) bytes, 256-byte
// aligned (as cudaMalloc returns it). `blur`: the path of launch_gauss for B in mode local
// (Auto, as the Gaussian stage; Separable for the exact sums at any sigma). Parameters are
// validated by the caller (BrightnessParams::validate_frames); views that break the
// limitations above, or too little scratch, return cudaErrorInvalidValue, as launch_clahe's
// refusals (a grid whose tiles are wider than 65535 pixels).
cudaError_t launch_brightness(const BrightnessParams& params, const FrameShape& shape,
                              ConstImageView in, ImageView out, void* scratch,
                              std::size_t scratch_bytes, cudaStream_t stream,
                              GaussPath blur = GaussPath::Auto);

}  // namespace starsift::cuda
