// SPDX-License-Identifier: LGPL-2.1-or-later
// CUDA launcher of the adaptive brightness correction (pipeline/brightness/params.hpp), on
// device frames; reference.hpp's steps, on `stream`. Mode local from sigma
// 2 LuminanceBlur::kMinSmallSigma (8) with `blur` Auto computes B as the CPU's fast path does
// (luminance_blur.hpp): on a small plane n_y x n_x, f = LuminanceBlur::downsample_factor()
// times smaller each way (2 at sigma 8, 8 at sigma 40, at most 16), brought back bilinearly:
//
// | kernel         | reads             | writes                      | what                     |
// |----------------|-------------------|-----------------------------|--------------------------|
// | tent_tables    | -                 | each axis's tents (scratch) | LuminanceBlur's floats   |
// |                |                   |                             | (tent_axis.hpp): a warp  |
// |                |                   |                             | per pixel, its totals'   |
// |                |                   |                             | shares in parallel; only |
// |                |                   |                             | when BrightnessTables    |
// |                |                   |                             | records other sizes      |
// | reduce_rows    | the frame         | the small plane's two       | Y bit for bit the        |
// |                |                   | halves side by side: n_y x  | reference's, reduced     |
// |                |                   | n_x float pairs (run r's    | across by the tents,     |
// |                |                   | rows towards sample r, run  | then down in shared      |
// |                |                   | r - 1's)                    |                          |
// |                |                   |                             | memory: a block a few    |
// |                |                   |                             | runs of rows             |
// | small_blur     | the halves (their | its rows at the frame's     | sigma_s, reflect-101;    |
// |                | sum: the small    | width: n_y x width floats   | the CPU's path: the      |
// |                | plane), the x     |                             | exact sums, one kernel   |
// |                | tents             |                             |                          |
// |                |                   |                             | up to radius 32 (16 x 16 |
// |                |                   |                             | tiles and their apron in |
// |                |                   |                             | shared memory: ~560      |
// |                |                   |                             | blocks at 4K sigma 40),  |
// |                |                   |                             | the rows then            |
// |                |                   |                             | interpolated across as   |
// |                |                   |                             | LuminanceBlur does, a    |
// |                |                   |                             | tile's pixels from its   |
// |                |                   |                             | shared memory (tiles     |
// |                |                   |                             | overlap by a column);    |
// |                |                   |                             | else launch_gauss        |
// |                |                   |                             | Separable, or its        |
// |                |                   |                             | recursion where          |
// |                |                   |                             | gauss_cpu_recursive(),   |
// |                |                   |                             | into a plane (the halves |
// |                |                   |                             | added by add_halves      |
// |                |                   |                             | first), then:            |
// | upsample_rows  | it blurred        | its rows at the frame's     | across, as LuminanceBlur |
// |                |                   | width: n_y x width floats   | after launch_gauss only  |
// | histogram      | the frame, the    | the histogram (scratch);    | percentile only: v       |
// |                | upsampled rows    | up to 4096 bins its last    | rounded to a sensor      |
// |                |                   | block selects lo and hi     | value, one bin each      |
// | select         | the histogram     | lo, hi (scratch)            | one block, where the     |
// |                |                   |                             | histogram does not       |
// |                |                   |                             | select (above 4096 bins, |
// |                |                   |                             | GRAY32F's rounds)        |
// | correct        | the frame, the    | the output frame            | steps 2-5: v, the        |
// |                | upsampled rows    |                             | stretch, the samples     |
// |                |                   |                             | (Y and v recomputed)     |
//
// The histogram and correct kernels take B between two of those rows (a few MiB at 4K, read
// from L2) as LuminanceBlur::row() does. So a pixel of b bytes moves 4 b + 12 / f bytes with
// the percentile stretch (3 b + 12 / f without), where a copy moves 2 b: 17.5 bytes for 4K
// RGBA at sigma 40, at most 46 % of the copy roofline (59 % without the percentile);
// bench/README.md (starsift-bench-brightness). The three full-frame kernels are bound by
// instructions rather than bytes, so a pixel's arithmetic (brightness_pixel.hpp) avoids
// conversion and double-precision instructions and the library's exp2f, log2f and division
// (a colour pixel's Y, power, ratio and rounding in some 60 instructions), and the small
// plane's steps, latency more than work, take few launches.
//
// Below sigma 8, or with a `blur` path named (tests, benches), B is the exact blur of Y on
// full planes:
//
// | kernel       | reads          | writes                   | what                            |
// |--------------|----------------|--------------------------|---------------------------------|
// | luminance    | the frame      | Y (float plane, scratch) | step 1, bit for bit the         |
// |              |                |                          | reference's Y                   |
// | launch_gauss | Y              | B (float plane, scratch) | sigma on both axes, reflect-101 |
// | histogram    | the frame, B   | the histogram (scratch)  | as above, B from its plane      |
// | select       | the histogram  | lo, hi (scratch)         |                                 |
// | correct      | the frame, B   | the output frame         |                                 |
//
// Outside the blur that moves 4 b + 12 bytes per pixel with the percentile stretch (3 b + 8
// without).
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
// Accuracy, on v before the stretch, which multiplies it by its scale (and a colour channel by
// up to 1 / kLumaB of its pixel's luma); tests/brightness/test_brightness_cuda.cpp.
//
// From sigma 8 (Auto), against the CPU's fast path (BrightnessCpu, LuminanceBlur): the tents
// are the same floats (tent_axis.hpp) and every sum is added in LuminanceBlur's order, each
// product and sum rounded on its own, which replayed on the host gives LuminanceBlur's B bit
// for bit (test_brightness_small_plane.cpp). B then differs only by
//  - Y's last place (the GPU's Y is the reference's double quotient rounded, the CPU's a float
//    product: 2 ulp) and what it moves in the sums after it: at most a last place (2^-24) per
//    operation, 4 f + 4 for each axis's tents and 6 for the interpolation, (8 f + 16) 2^-24;
//  - the small plane's blur, the exact sums in float in another order: 2 (2 r + 1) 2^-24
//    (r = ceil(4 sigma_s), two axes);
// so B within 9.7e-6 of Y's range at sigma 40 (f 8, r 20), 1.5e-5 at sigma 100 (f 16, r 25);
// where the recursion blurs the small plane (gauss_cpu_recursive(): sigma_s >= 50, sigma
// beyond ~800, or an axis of one pixel at sigma >= 50) the GPU's recursion within 5e-5 of
// the CPU's more. These are worst cases: the rounding errors of a sum rarely all lean one way.
// v: within 1e-5 of the range (the device's exp2 and log2 units against the CPU's
// polynomials: 2e-6 relative, plus local_power()'s 3.3e-7 at strength 1, 2.6e-6 at strength
// 4; the blend in float) plus 0.51 strength times B's difference (dC/dB <= 2 ln 2 strength / e):
// 1.5e-5 at sigma 40 and strength 1, 3e-5 at strength 4, 4e-5 at sigma 100 and strength 4. So
// integer samples within one count up to 12 bits and for colour, 16-bit ones within 1 + that
// in counts, rounded down (1 at sigma 40 and strength 1, 2 at strength 4, 3 at sigma 100 and
// strength 4), before the stretch's scale; the
// percentile's lo and hi within as much of the CPU's. Against the reference the fast path's
// own difference adds (luminance_blur.hpp: B within 2.2e-3 on a hard step at sigma 8, 6e-4
// from sigma 40).
//
// Below sigma 8, or with a `blur` path named, against brightness_reference()
// (brightness_pixel.hpp has the arithmetic):
//  - with the blur's exact sums (launch_gauss's fused path, which Auto takes up to sigma 4, or
//    `blur` Separable at any sigma): within 1e-5 of the range (the power in float, the blur's
//    float sums in another order), so an integer sample within 1 where v lands that close to
//    a rounding boundary;
//  - beyond sigma 4 Auto (below 8) or Recursive blurs by the recursion, whose B differs from the
//  exact blur's by up
//    to 2.5e-4 of Y's range (1.4e-4 measured for the CPU's recursion at a 0.1..0.9 step, the
//    GPU's within 5e-5 of it; 2e-5 on noise, less on a sky), which moves v by up to
//    0.51 strength times that (dC/dB <= 2 ln 2 strength / e): integer samples within
//    1 + 1.3e-4 strength max counts (8 bits: 1; 12 bits: 1 at strength 1; 16 bits: 9),
//    GRAY32F within 1.4e-4 strength.
//  - mode clahe: the mapped plane is the reference's, so v is within float rounding of the
//    reference's and integer samples within 1 (rare flips).
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

// What the small plane's tent tables in a scratch were built for (host memory, kept by the
// caller with its scratch): where they lie and the sizes they depend on, the frame's and the
// small plane's (which sigma sets). Passed to launch_brightness or launch_brightness_blur, a
// launch from sigma 8 (Auto) builds the tables only where this differs from its own and then
// records them; one that lays the scratch out otherwise (mode clahe, another frame size) clears
// it. The tables depend on nothing else, so this saves the tent_tables kernel on every frame
// but the first of a size and sigma. Clear it (= {}) whenever the scratch is allocated anew or
// written by anything other than these launchers; launches that share it are ordered as
// launches on one scratch must be anyway (one stream).
struct BrightnessTables {
  const void* at = nullptr;  // the tables' first byte in the scratch; null: none recorded
  int width = 0;
  int height = 0;
  int small_width = 0;
  int small_height = 0;
  friend bool operator==(const BrightnessTables&, const BrightnessTables&) = default;
};

// Bytes of device scratch launch_brightness needs for frames of `shape` with `params`: the
// range and histograms of the stretch, then for mode local the Y and B planes and
// launch_gauss's scratch for any path, and the small plane's tables, planes and scratch at
// factor 2, the largest (so sigma may change freely), for mode clahe the mapped
// plane, colour's 8-bit luma and clahe_scratch_bytes() (which grows with the grid and the
// bit depth).
std::size_t brightness_scratch_bytes(const BrightnessParams& params,
                                     const FrameShape& shape) noexcept;

// Where the percentile stretch's range lies in `scratch` (a device pointer): at its start, for
// any parameters.
const BrightnessStretchRange* brightness_stretch_range(const void* scratch) noexcept;

// Corrects `in` into `out` (both of `shape`: size, format; the bit depth sets the maximum) on
// `stream`. `scratch` holds at least brightness_scratch_bytes(params, shape) bytes, 256-byte
// aligned (as cudaMalloc returns it). `blur`, for B in mode local: Auto, the small plane from
// sigma 8 (as the CPU's fast path) and below it launch_gauss's Auto on the full plane (as the
// Gaussian stage); a path named blurs the full plane by that path at any sigma (Separable: the
// reference's exact sums, for tests; Recursive). Parameters are
// validated by the caller (BrightnessParams::validate_frames); views that break the
// limitations above, or too little scratch, return cudaErrorInvalidValue, as launch_clahe's
// refusals (a grid whose tiles are wider than 65535 pixels). `tables`: the caller's record of
// the scratch's tent tables (above), or null to build them on every launch that needs them.
cudaError_t launch_brightness(const BrightnessParams& params, const FrameShape& shape,
                              ConstImageView in, ImageView out, void* scratch,
                              std::size_t scratch_bytes, cudaStream_t stream,
                              GaussPath blur = GaussPath::Auto, BrightnessTables* tables = nullptr);

// B, as mode local's correction reads it for these parameters (`blur` as above), written into
// `blurred` (a GRAY32F device frame of the frame's size, 4-byte aligned, any pitch of whole
// floats): what the tests hold against LuminanceBlur and the exact blur. Mode local only; the
// same scratch and refusals as launch_brightness.
cudaError_t launch_brightness_blur(const BrightnessParams& params, const FrameShape& shape,
                                   ConstImageView in, ImageView blurred, void* scratch,
                                   std::size_t scratch_bytes, cudaStream_t stream,
                                   GaussPath blur = GaussPath::Auto,
                                   BrightnessTables* tables = nullptr);

}  // namespace starsift::cuda
