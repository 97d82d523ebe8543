// SPDX-License-Identifier: LGPL-2.1-or-later
// Sizes as people write them in a config: "5 GiB", "500 MB", "1.5TB", or a plain number of
// bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace starsift::daemon {

// The largest size accepted: far beyond any disk, small enough that "5 PB" for "5 GB" is caught.
inline constexpr std::uint64_t kMaxSizeBytes = std::uint64_t{1} << 50;  // 1 PiB

// The units, for messages: "B, kB, MB, GB, TB (powers of 1000), KiB, MiB, GiB, TiB, PiB
// (powers of 1024)".
std::string size_units_text();

// A number (integer or decimal, no sign, no exponent), optional spaces, then an optional unit
// of size_units_text() ("5 GiB", "0.5 TB", "1000000"), rounded to whole bytes, at most
// kMaxSizeBytes. Throws Error saying what is wrong and what is allowed.
std::uint64_t parse_size(std::string_view text);

// The size in the largest binary unit that divides it ("5 GiB"), else in bytes ("1000 B").
std::string size_text(std::uint64_t bytes);

}  // namespace starsift::daemon
