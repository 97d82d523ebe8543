// SPDX-License-Identifier: LGPL-2.1-or-later
// What detection reports about each object it finds in a frame: one record per object, the
// stage's per-frame result (kind kCatalogueKind, up to DetectParams::max_objects records, the
// rest counted as overflow). Coordinates are 0-based with (0, 0) the centre of the first pixel
// and x the fast axis; angles in radians from +x towards +y, in (-pi/2, pi/2]. Fluxes are in
// the input's units above the background (in sigma units when the input is already a
// significance image, background: none).
#pragma once

#include <cstdint>
#include <string_view>

namespace starsift {

inline constexpr std::string_view kCatalogueKind = "catalogue";

// DetectedObject::flags.
inline constexpr std::uint32_t kObjectTouchesEdge = 1u << 0;   // a pixel on the frame's border
inline constexpr std::uint32_t kObjectMerged = 1u << 1;        // two or more sources (blend.hpp)
inline constexpr std::uint32_t kObjectSingular = 1u << 2;      // degenerate second moments (a
                                                               // line or one pixel): 1/12 added
inline constexpr std::uint32_t kObjectNoFlux = 1u << 3;        // flux <= 0, or weighted moments
                                                               // no ellipse: moments unweighted
inline constexpr std::uint32_t kObjectStreakMerged = 1u << 4;  // pieces of one streak merged
                                                               // (streak_merge.hpp)

struct DetectedObject {
  std::uint32_t id = 0;    // dense id: 1.. in raster order of the object's first pixel
  std::uint32_t npix = 0;  // pixels above the threshold
  std::int32_t xmin = 0, xmax = 0, ymin = 0, ymax = 0;  // true bounding box, inclusive
  float flux = 0.0f;       // sum over the pixels of (value - background)
  float flux_err = 0.0f;   // sqrt(sum sigma^2): background noise only
  float peak = 0.0f;       // the largest value - background
  std::int32_t xpeak = 0;  // its pixel (the first in raster order on a tie)
  std::int32_t ypeak = 0;
  float x = 0.0f, y = 0.0f;               // flux-weighted centroid
  float x_err = 0.0f, y_err = 0.0f;       // its error: sqrt(sum sigma^2 (x - x_c)^2) / flux
  float x2 = 0.0f, y2 = 0.0f, xy = 0.0f;  // flux-weighted second central moments, px^2
  float a = 0.0f, b = 0.0f;               // semi-major and semi-minor axes, px (rms along the axes)
  float theta = 0.0f;                     // position angle of the major axis
  float elongation = 0.0f;                // a / b (0 when b is 0)
  // Streaks: the length along the major axis of a uniform trail whose width is the minor axis,
  // sqrt(12 (a^2 - b^2)), and its end points centroid -+ length / 2 along theta.
  float length = 0.0f;
  float x_start = 0.0f, y_start = 0.0f, x_end = 0.0f, y_end = 0.0f;
  std::uint32_t flags = 0;
  std::int32_t track = -1;  // the track it was linked to (siftdetect), -1 when none
};

}  // namespace starsift
