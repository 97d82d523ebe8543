// SPDX-License-Identifier: LGPL-2.1-or-later
// Border modes: how a filter reads pixels outside the frame. One definition, used by the
// CPU reference and the CUDA kernels alike.
#pragma once

#include <string>
#include <string_view>

#include "pipeline/hd.hpp"

namespace starsift {

enum class BorderMode {
  Replicate,   // aaa|abcd|ddd
  Reflect101,  // dcb|abcd|cba (the edge pixel is not repeated)
  Constant,    // vvv|abcd|vvv with a user-chosen value v
};

std::string_view to_string(BorderMode mode) noexcept;
// Accepts "replicate", "reflect-101" (also "reflect101"), "constant"; throws Error otherwise.
BorderMode parse_border_mode(std::string_view name);
std::string border_mode_names();

// Maps coordinate `i` (any integer) onto 0..n-1 for an axis of length n >= 1, or returns -1
// for Constant when `i` lies outside (the caller then uses the border value).
// Reflect101 folds repeatedly, so windows wider than the frame stay defined; on a single
// pixel (n == 1) every coordinate maps to 0.
STARSIFT_HD int border_index(int i, int n, BorderMode mode) {
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case BorderMode::Replicate:
      return i < 0 ? 0 : n - 1;
    case BorderMode::Reflect101: {
      if (n == 1) return 0;
      const int period = 2 * (n - 1);
      int m = i % period;
      if (m < 0) m += period;
      return m < n ? m : period - m;
    }
    case BorderMode::Constant:
    default:
      return -1;
  }
}

}  // namespace starsift
