// SPDX-License-Identifier: LGPL-2.1-or-later
// A live view's picture (docs/publishing.md, "Live video"): a frame of the pipeline in 8 bits
// for a person watching, with the same asinh stretch as the preview, and the detections'
// marks on the detections view. The stretch is fitted again at most once a second, so the
// picture does not flicker with each frame's noise, and applied through a table: one lookup
// per pixel. Nothing is allocated per frame.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "app/host_image.hpp"
#include "pipeline/detect/catalogue.hpp"
#include "pipeline/detect/tracker.hpp"
#include "pipeline/image.hpp"

namespace starsift::daemon {

class ViewRenderer {
 public:
  static constexpr std::int64_t kRefitUs = 1'000'000;

  ViewRenderer();

  // `frame` (GRAY8 or GRAY16) into `out` (GRAY8, the same size), with `objects` and `movers`
  // marked. `now_us` (a monotonic clock) decides when the stretch is fitted again; a frame of
  // another format or size is fitted at once. Throws Error for another format.
  void render(ConstImageView frame, std::span<const DetectedObject> objects,
              std::span<const Track> movers, std::int64_t now_us, ImageView out);

 private:
  void refit(ConstImageView frame);

  std::vector<std::uint8_t> table_;  // 65536 entries: a GRAY16 value (GRAY8 x 257) -> 8 bits
  app::HostImage ramp_;              // 0..65535 in one GRAY16 row: the table's input
  app::HostImage widened_;           // a GRAY8 frame as GRAY16, for the fit; reused
  std::int64_t fitted_us_ = 0;
  int width_ = 0, height_ = 0;
  PixelFormat format_ = PixelFormat::Gray8;
  bool fitted_ = false;
};

}  // namespace starsift::daemon
