// SPDX-License-Identifier: LGPL-2.1-or-later
// The one definition of CLAHE's numbers, shared by clahe_reference(), ClaheCpu and the CUDA
// kernels: the tile grid on the frame, the clip limit, the map's scale, and the float
// arithmetic of the bilinear blend, each operation written out in OpenCV's order so every
// implementation rounds alike. docs/clahe.md explains each choice.
//
// As OpenCV's cv::CLAHE (imgproc/src/clahe.cpp), with one deliberate difference: the
// histogram has 2^bits bins for the sensor's real bit depth (OpenCV: 65536 for any 16-bit
// frame), and a sample above 2^bits - 1 counts in, and is mapped by, the top bin.
// At bits 16 (and for GRAY8) the pixels are OpenCV's.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "pipeline/brightness/params.hpp"
#include "pipeline/error.hpp"
#include "pipeline/hd.hpp"
#include "pipeline/image.hpp"

namespace starsift {

struct ClaheLayout {
  int width = 0;  // the frame
  int height = 0;
  int bits = 8;    // real bits per sample: 8 for GRAY8, the bit depth for GRAY16
  int bins = 256;  // 2^bits; one histogram bin and one map entry per value
  int tiles_x = 1;
  int tiles_y = 1;
  // Tile size. When the frame does not divide into the grid, OpenCV pads it at the right and
  // the bottom (reflect-101) by tiles - (size % tiles) on BOTH axes, even one that divides:
  // then tile = size / tiles + 1 on each axis.
  int tile_w = 1;
  int tile_h = 1;
  bool padded = false;   // tiles read past the frame's right or bottom edge
  int clip = 0;          // most counts a bin keeps; 0: no clipping
  float lut_scale = 0;   // (bins - 1) / tile area: a count sum times this is the mapped value
  float inv_tile_w = 0;  // 1 / tile_w, 1 / tile_h as OpenCV rounds them (float)
  float inv_tile_h = 0;

  STARSIFT_HD int tiles() const { return tiles_x * tiles_y; }
  STARSIFT_HD int tile_area() const { return tile_w * tile_h; }
  STARSIFT_HD int top() const { return bins - 1; }
  STARSIFT_HD int padded_width() const { return tiles_x * tile_w; }
  STARSIFT_HD int padded_height() const { return tiles_y * tile_h; }
};

// The layout for a `width` x `height` frame of `format` (GRAY8, or GRAY16 with `bit_depth`
// 1..16 real bits). Throws Error for another format, a bit depth out of range, a grid outside
// 1..BrightnessParams::kMaxTiles, a negative clip limit, or a tile above 2^31 - 1 pixels.
inline ClaheLayout clahe_layout(const BrightnessParams& params, int bit_depth, int width,
                                int height, PixelFormat format) {
  ClaheLayout l;
  if (format == PixelFormat::Gray8) {
    if (bit_depth != 8)
      throw Error("CLAHE: bit depth " + std::to_string(bit_depth) + " for GRAY8",
                  "8 for GRAY8, 1..16 for GRAY16_LE");
    l.bits = 8;
  } else if (format == PixelFormat::Gray16) {
    if (bit_depth < 1 || bit_depth > 16)
      throw Error("CLAHE: bit depth " + std::to_string(bit_depth) + " for GRAY16_LE",
                  "1..16 for GRAY16_LE, 8 for GRAY8");
    l.bits = bit_depth;
  } else {
    throw Error("CLAHE: format " + std::string(to_string(format)), "GRAY8, GRAY16_LE");
  }
  if (params.tiles_x < 1 || params.tiles_x > BrightnessParams::kMaxTiles || params.tiles_y < 1 ||
      params.tiles_y > BrightnessParams::kMaxTiles)
    throw Error(
        "CLAHE: tiles " + std::to_string(params.tiles_x) + "x" + std::to_string(params.tiles_y),
        "1.." + std::to_string(BrightnessParams::kMaxTiles) + " on each axis");
  if (!(params.clip_limit >= 0.0))
    throw Error("CLAHE: clip_limit " + std::to_string(params.clip_limit), "0 (no limit) or >= 1");
  if (width < 1 || height < 1)
    throw Error("CLAHE: frame " + std::to_string(width) + "x" + std::to_string(height),
                "at least 1x1");
  l.width = width;
  l.height = height;
  l.bins = 1 << l.bits;
  l.tiles_x = params.tiles_x;
  l.tiles_y = params.tiles_y;
  l.padded = width % l.tiles_x != 0 || height % l.tiles_y != 0;
  l.tile_w = width / l.tiles_x + (l.padded ? 1 : 0);
  l.tile_h = height / l.tiles_y + (l.padded ? 1 : 0);
  const long long area = static_cast<long long>(l.tile_w) * l.tile_h;
  if (area > 0x7fffffffLL)
    throw Error(
        "CLAHE: tiles of " + std::to_string(l.tile_w) + "x" + std::to_string(l.tile_h) + " pixels",
        "at most 2^31 - 1 pixels a tile: more tiles");
  // OpenCV: static_cast<int>(clipLimit * tileArea / histSize), at least 1. A limit at or
  // above the tile's area clips nothing (no bin can exceed it): held there, so a huge
  // clip_limit cannot overflow the int and still means "no clipping".
  if (params.clip_limit > 0.0) {
    const double limit = params.clip_limit * static_cast<double>(area) / l.bins;
    l.clip = limit >= static_cast<double>(area) ? static_cast<int>(area)
                                                : std::max(static_cast<int>(limit), 1);
  }
  l.lut_scale = static_cast<float>(l.bins - 1) / static_cast<float>(area);
  l.inv_tile_w = 1.0f / static_cast<float>(l.tile_w);
  l.inv_tile_h = 1.0f / static_cast<float>(l.tile_h);
  return l;
}

// The layout for `in`, after checking that `out` has its size and format (the maps need the
// whole input, so the two must not be the same memory either).
inline ClaheLayout clahe_layout(const BrightnessParams& params, int bit_depth, ConstImageView in,
                                ImageView out) {
  if (out.width != in.width || out.height != in.height || out.format != in.format)
    throw Error("CLAHE: output " + std::to_string(out.width) + "x" + std::to_string(out.height) +
                    " " + std::string(to_string(out.format)) + " for input " +
                    std::to_string(in.width) + "x" + std::to_string(in.height) + " " +
                    std::string(to_string(in.format)),
                "the input's size and format");
  return clahe_layout(params, bit_depth, in.width, in.height, in.format);
}

// ---- The float arithmetic, one rounding per operation --------------------------------------
// Host files that use these are compiled with -ffp-contract=off; device code spells each
// rounding (__fmul_rn, __fadd_rn), so no multiply-add is ever fused.

STARSIFT_HD float clahe_mul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
STARSIFT_HD float clahe_add(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
STARSIFT_HD float clahe_sub(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}

// Round to nearest, ties to even, as OpenCV's cvRound (SSE2 cvtss2si in the default mode):
// exact for 0 <= v < 2^22 by the 1.5 * 2^23 addition, which leaves the rounded integer in
// the low mantissa bits. Every value rounded here is a non-negative sample value.
STARSIFT_HD int clahe_round(float v) {
#if defined(__CUDA_ARCH__)
  return __float2int_rn(v);
#else
  return static_cast<int>((v + 12582912.0f) - 12582912.0f);
#endif
}

// The mapped value of a cumulative count `sum`: saturate_cast<T>(sum * lut_scale).
STARSIFT_HD int clahe_map_value(int sum, float lut_scale, int top) {
  const int v = clahe_round(clahe_mul(static_cast<float>(sum), lut_scale));
  return v < 0 ? 0 : (v > top ? top : v);
}

// Where coordinate `i` falls between tile centres on one axis: the two tiles whose maps it
// blends (clamped into the grid at the edges) and their weights. OpenCV: t = i * inv - 0.5f,
// t1 = floor(t), w2 = t - t1, w1 = 1 - w2.
struct ClaheAxis {
  int t1;
  int t2;
  float w1;  // weight of tile t1
  float w2;  // weight of tile t2
};

STARSIFT_HD ClaheAxis clahe_axis(int i, float inv_tile, int tiles) {
  const float t = clahe_sub(clahe_mul(static_cast<float>(i), inv_tile), 0.5f);
  const int t1 = static_cast<int>(floorf(t));
  ClaheAxis a;
  a.w2 = clahe_sub(t, static_cast<float>(t1));
  a.w1 = clahe_sub(1.0f, a.w2);
  a.t1 = t1 < 0 ? 0 : t1;
  a.t2 = t1 + 1 > tiles - 1 ? tiles - 1 : t1 + 1;
  return a;
}

// The cell of coordinate `i`: 0..tiles, the stretch between two tile centres it lies in (0
// before the first centre, tiles after the last), where clahe_axis() gives the same tiles.
// Non-decreasing in i.
STARSIFT_HD int clahe_cell(int i, float inv_tile) {
  const float t = clahe_sub(clahe_mul(static_cast<float>(i), inv_tile), 0.5f);
  return static_cast<int>(floorf(t)) + 1;
}

// The blend of the four maps' values, rounded and held to 0..top, as OpenCV's
// (m11 * x1 + m12 * x2) * y1 + (m21 * x1 + m22 * x2) * y2, where mYX is the value of tile
// (t1 or t2 of y, t1 or t2 of x).
STARSIFT_HD int clahe_blend(int m11, int m12, int m21, int m22, float x1, float x2, float y1,
                            float y2, int top) {
  const float upper =
      clahe_add(clahe_mul(static_cast<float>(m11), x1), clahe_mul(static_cast<float>(m12), x2));
  const float lower =
      clahe_add(clahe_mul(static_cast<float>(m21), x1), clahe_mul(static_cast<float>(m22), x2));
  const int v = clahe_round(clahe_add(clahe_mul(upper, y1), clahe_mul(lower, y2)));
  return v < 0 ? 0 : (v > top ? top : v);
}

}  // namespace starsift
