// SPDX-License-Identifier: LGPL-2.1-or-later
// The aligned frame difference of every scored frame (the residual of the difference-aligned
// baseline, methods.hpp: frames repaired from the bad-pixel map, the previous one moved onto the
// current one's pixels by the shift whitening measures) written to files with the frame's truth,
// so that a detector outside the harness (SEP: bench/peers/sep_quality.py) is scored on the same
// frames by the same rules (docs/quality.md, "SEP on the aligned difference").
//
// Under the export directory, one directory per scene and cell, SCENE/snrS-speedV/:
//   cell.json                       the cell, the frame size, the interior, the hit radius
//   truth.jsonl                     one line per scored frame: its files, the trials (indices of
//                                   the movers inside the interior) and the sky's truth
//   frame-NNNNNN-difference.npy     float32 (height, width), ADU
//   frame-NNNNNN-place.npy          uint8 (height, width): where a false detection at that pixel
//                                   would lie (FrameLayout::classify() at the pixel centre, the
//                                   Place's value), kNotScoredPlace outside the interior
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "app/quality/config.hpp"
#include "app/quality/frame_layout.hpp"
#include "pipeline/plane.hpp"
#include "pipeline/sky/sky_truth.hpp"

namespace starsift::quality {

// The place map's value outside the interior (nothing there is scored).
inline constexpr std::uint8_t kNotScoredPlace = 255;

class DifferenceExport {
 public:
  // Creates the cell's directory under config.export_dir and writes cell.json. Throws Error
  // when it cannot.
  DifferenceExport(const QualityConfig& config, const SceneSpec& scene, const Cell& cell, int width,
                   int height);

  // Scored frame `frame`: its aligned difference (ADU), its truth and what is where (`layout`
  // laid out for this frame).
  void write_frame(int frame, const Plane& difference, const SkyTruth& truth,
                   const FrameLayout& layout);

  const std::filesystem::path& directory() const noexcept { return dir_; }

  // SCENE/snrS-speedV under `root`.
  static std::filesystem::path cell_directory(const std::filesystem::path& root,
                                              const SceneSpec& scene, const Cell& cell);
  // frame-NNNNNN-difference.npy, frame-NNNNNN-place.npy.
  static std::string difference_name(int frame);
  static std::string place_name(int frame);

 private:
  std::filesystem::path dir_;
  Interior interior_;
  std::ofstream truth_;
  std::vector<std::uint8_t> places_;
};

}  // namespace starsift::quality
