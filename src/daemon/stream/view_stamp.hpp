// SPDX-License-Identifier: LGPL-2.1-or-later
// A number burnt into the top of an 8-bit view as black and white cells, which survives
// H.264 at any sensible bitrate: how the latency from a frame's capture to an RTSP client's
// decoded picture is measured (bench/rtsp_latency) without trusting any timestamp on the way.
// 64 bits of the number, then 8 bits of check (the XOR of its bytes), each a cell of
// kStampCellHeight rows and width/72 columns; the daemon writes it only when asked
// (STARSIFT_VIEW_STAMP=1 in its environment).
#pragma once

#include <cstdint>
#include <optional>

#include "pipeline/image.hpp"

namespace starsift::daemon {

inline constexpr int kStampBits = 72;
inline constexpr int kStampCellHeight = 16;
inline constexpr int kStampMinCellWidth = 4;

inline std::uint8_t stamp_check(std::uint64_t value) {
  std::uint8_t check = 0x5a;
  for (int i = 0; i < 8; ++i) check ^= static_cast<std::uint8_t>(value >> (8 * i));
  return check;
}

// False when the view is too small to hold a stamp (narrower than 72 * 4 px or lower than 16).
inline bool write_view_stamp(ImageView view, std::uint64_t value) {
  const int cell = view.width / kStampBits;
  if (cell < kStampMinCellWidth || view.height < kStampCellHeight) return false;
  const std::uint8_t check = stamp_check(value);
  for (int bit = 0; bit < kStampBits; ++bit) {
    const bool on =
        bit < 64 ? ((value >> (63 - bit)) & 1U) != 0 : ((check >> (71 - bit)) & 1U) != 0;
    for (int y = 0; y < kStampCellHeight; ++y) {
      auto* row = view.row_as<std::uint8_t>(y);
      for (int x = bit * cell; x < (bit + 1) * cell; ++x) row[x] = on ? 255 : 0;
    }
  }
  return true;
}

// The number, read from each cell's central pixels; nothing when the check does not match.
inline std::optional<std::uint64_t> read_view_stamp(ConstImageView view) {
  const int cell = view.width / kStampBits;
  if (cell < kStampMinCellWidth || view.height < kStampCellHeight) return std::nullopt;
  std::uint64_t value = 0;
  std::uint8_t check = 0;
  for (int bit = 0; bit < kStampBits; ++bit) {
    int sum = 0, count = 0;
    for (int y = kStampCellHeight / 4; y < 3 * kStampCellHeight / 4; ++y) {
      const auto* row = view.row_as<std::uint8_t>(y);
      for (int x = bit * cell + cell / 4; x < bit * cell + 3 * cell / 4; ++x, ++count) {
        sum += row[x];
      }
    }
    const bool on = sum > 128 * count;
    if (bit < 64) {
      value = (value << 1) | (on ? 1U : 0U);
    } else {
      check = static_cast<std::uint8_t>((check << 1) | (on ? 1U : 0U));
    }
  }
  if (check != stamp_check(value)) return std::nullopt;
  return value;
}

}  // namespace starsift::daemon
