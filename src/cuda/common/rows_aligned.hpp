// SPDX-License-Identifier: LGPL-2.1-or-later
// Whether a frame's rows allow word-wide loads and stores: the launchers' one test before they
// pick a kernel's word path over its sample-at-a-time one.
#pragma once

#include <cstddef>
#include <cstdint>

namespace starsift::cuda {

// Whether rows starting at `data`, `stride` bytes apart, all start on a multiple of `bytes`
// (so that words of that size can be loaded or stored along them).
inline bool rows_aligned(const void* data, std::ptrdiff_t stride, std::size_t bytes) noexcept {
  return (reinterpret_cast<std::uintptr_t>(data) | static_cast<std::uintptr_t>(stride)) % bytes ==
         0;
}

}  // namespace starsift::cuda
