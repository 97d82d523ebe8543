// SPDX-License-Identifier: LGPL-2.1-or-later
// Detection's line channel (docs/detect.md, "The line channel"): a streak too faint for any of
// its pixels to pass the threshold is found by the sum of the significance along a line through
// each pixel. A streak of amplitude a (in units of the pixel noise) gives each filtered pixel
// of its core only about 2 a sigma, but the sum of l of them grows as l while its noise grows
// about as sqrt(2.7 l) (the filtered pixels are correlated): with l = 15 a streak of a = 1.1
// reaches 5.5 sigma, where the point channel needs a of about 2.3 for 4.5.
//
// The bank: length + 1 orientations over [0, pi), so that the ends of neighbouring lines lie
// about 1.5 px apart (measured on noiseless streaks: a bank 1.5 times as fine gains 2 %). Each line
// is digital: its `length` taps are whole pixels, one per column (one per row for the steep ones),
// rounded to the nearest, so the taps are distinct and the sum needs no interpolation. Its noise is
// that of a sum of correlated significances: the point filter's autocorrelation summed over the
// line's pairs of taps, so a line's sum over white noise has unit variance whatever the filter and
// orientation.
//
// Each tap's significance is capped at kCap sigma before it is summed: a streak's pixels lie far
// below the cap, while a star (or the residual a star leaves after whitening) adds at most the
// cap for each of the few taps that cross it, so lines through bright points do not grow a disc
// of false detections around each one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "pipeline/detect/params.hpp"
#include "pipeline/plane.hpp"
#include "pipeline/thread_pool.hpp"

namespace starsift {

struct DetectKernel;  // reference.hpp: the point filter

struct LineTap {
  int dx = 0;
  int dy = 0;
};

struct LineOrientation {
  double theta = 0.0;  // radians from +x towards +y, in [0, pi)
  std::vector<LineTap> taps;
  float inv_norm = 1.0f;  // 1 / the standard deviation of the taps' sum over white noise
};

struct LineBank {
  static constexpr float kCap = 3.0f;  // sigma: what one tap adds at most
  int length = 0;                      // taps per line; 0: no line channel
  int radius = 0;                      // length / 2: how far a tap lies from the line's centre
  std::vector<LineOrientation> orientations;
};

// The bank for lines of `length` taps (odd, >= 3) after the point filter `kernel`; empty (length
// 0) for length 0.
LineBank make_line_bank(int length, const DetectKernel& kernel);

// Whether going from `from` to `to` needs another bank: the length, or the point filter whose
// autocorrelation the norms sum (making a bank takes up to ~50 ms at length 63, so a live change
// of anything else keeps it).
bool line_bank_changes(const DetectParams& from, const DetectParams& to) noexcept;

// The line significance of each pixel: the best over the bank's orientations of
// inv_norm * sum_t min(significance(p + tap_t), kCap), taps outside the frame adding 0.
void line_significance(const Plane& significance, const LineBank& bank, Plane& out,
                       ThreadPool& pool);

// The capped significance with a margin of `radius` zeros (and a few more on the right, for
// the last vector of a row), and the taps' offsets in it, kept for frames of one shape.
struct LinePadding {
  std::vector<float> data;
  std::vector<std::ptrdiff_t> offsets;  // the bank's taps as offsets in `data`
  int width = -1, height = -1, radius = -1;
};

// The line channel of a detection: its bank and the scratch it reuses frame after frame.
class LineChannel {
 public:
  LineChannel() = default;
  LineChannel(int length, const DetectKernel& kernel) : bank_(make_line_bank(length, kernel)) {}

  const LineBank& bank() const noexcept { return bank_; }
  bool enabled() const noexcept { return bank_.length > 0; }

  // Sets mask[y * width + x] to 1 wherever the line significance exceeds `threshold`.
  void add_detections(const Plane& significance, float threshold, std::uint8_t* mask,
                      ThreadPool& pool);

 private:
  LineBank bank_;
  LinePadding padded_;
};

}  // namespace starsift
