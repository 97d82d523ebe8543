// SPDX-License-Identifier: LGPL-2.1-or-later
// What siftdetect draws on its overlay frame (output: overlay) for a person watching, on the
// host once the frame is tracked: each object's ellipse and each mover's tail (its recent
// positions as a polyline) with a cross where it is predicted next. The stage has written the
// frame already (the significance stretched over 0..254, the objects' boxes at 255); this
// adds to it, the same on both backends. docs/detect.md, "Output frame".
//
// Pure functions on a GRAY8 view (any other format is left alone). Every pixel written lies in
// the frame whatever the coordinates: lines are clipped to it, non-finite coordinates draw
// nothing. Coordinates are the catalogue's: (0, 0) the centre of the first pixel, x the fast
// axis, angles from +x towards +y.
#pragma once

#include <cstdint>
#include <span>

#include "pipeline/detect/catalogue.hpp"
#include "pipeline/detect/tracker.hpp"
#include "pipeline/image.hpp"

namespace starsift {

// Grey levels, one per kind, above the significance view's 0..254 where it matters most: the
// tracks at 255 like the boxes, the ellipses a shade below so the two can be told apart.
inline constexpr std::uint8_t kOverlayTrackLevel = 255;
inline constexpr std::uint8_t kOverlayEllipseLevel = 200;
// Ellipses are drawn with semi-axes 3 a, 3 b: a and b are the rms extent along the axes, so
// for a Gaussian star that is 3 sigma, where its profile is down to 1 % (near the extent of
// Source Extractor's Kron ellipse, which its displays draw).
inline constexpr double kOverlayEllipseScale = 3.0;
// Positions in a mover's tail: 16 frames, half a second at 30 frames/s (the tracker keeps
// them: TrackerParams::tail).
inline constexpr int kOverlayTail = 16;
// Half the arms of the cross at a mover's predicted position, px.
inline constexpr int kOverlayMarkerHalf = 2;

// The pixel nearest (x, y), when it lies in the frame.
void draw_point(ImageView image, double x, double y, std::uint8_t level) noexcept;

// The segment from (x0, y0) to (x1, y1): clipped to the frame, then the pixels of
// Bresenham's line between the rounded end points (both included).
void draw_line(ImageView image, double x0, double y0, double x1, double y1,
               std::uint8_t level) noexcept;

// The outline of the ellipse centred on (xc, yc) with semi-axes a, b (px) and the major axis
// at `theta`: points a step of about a pixel apart along the angle (at most 4096), joined by
// lines. Axes under half a pixel draw the centre's pixel alone.
void draw_ellipse(ImageView image, double xc, double yc, double a, double b, double theta,
                  std::uint8_t level) noexcept;

// Consecutive points joined by lines; a single point is its pixel. A non-finite point breaks
// the line there.
void draw_polyline(ImageView image, std::span<const TrackPoint> points,
                   std::uint8_t level) noexcept;

// A cross of arms `half` px long each way around the pixel nearest (x, y).
void draw_cross(ImageView image, double x, double y, int half, std::uint8_t level) noexcept;

// The frame's overlay: each object's ellipse (kOverlayEllipseScale a, b at
// kOverlayEllipseLevel), then for each mover of tracker.tracks() its tail, up to
// scratch.size() positions, and a cross at its position one frame ahead (x + vx, y + vy), at
// kOverlayTrackLevel. `scratch` holds a tail at a time (kOverlayTail points).
void draw_overlay(ImageView image, std::span<const DetectedObject> objects, const Tracker& tracker,
                  std::span<TrackPoint> scratch) noexcept;

}  // namespace starsift
