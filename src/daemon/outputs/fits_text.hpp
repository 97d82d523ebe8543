// SPDX-License-Identifier: LGPL-2.1-or-later
// (cfitsio's longnam.h #defines fits_file_name and other fits_* names: ours must differ.)
// The text a FITS frame carries, made FITS-safe: header values hold printable ASCII only, and
// a card holds 80 characters. Pure functions, apart from cfitsio, so they are tested alone.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace starsift::daemon {

// `text` with every byte outside printable ASCII (32..126) replaced: a tab by a space, anything
// else (UTF-8 included) by '?'.
std::string fits_ascii(std::string_view text);

// DATE-OBS as FITS writes it (UTC; the time scale is in TIMESYS, so no 'Z'):
// "2026-11-25T01:30:00.123456".
std::string fits_date_obs(std::int64_t utc_us);

// The same instant as a Modified Julian Date (days since 1858-11-17 00:00 UTC), for MJD-OBS.
double modified_julian_date(std::int64_t utc_us);

// "<UTC time>_<frame number>.fits" in the basic ISO 8601 form, with no ':' that copying to
// another system (scp, SMB, FAT) would trip on: "20261125T013000.123456Z_42.fits".
std::string fits_frame_file_name(std::int64_t utc_us, std::uint64_t frame_number);

// The chain's YAML as HISTORY card texts (72 characters at most each): a first card saying
// what follows, then each YAML line in cards of its own, the first starting with "| " and any
// continuation of a long line with "+ ". Reading back: drop the first card, then join each "+ "
// card's rest to the line before and start a new line at each "| " card ("|" alone, once a
// reader has dropped the card's trailing spaces: an empty line). Bytes outside
// printable ASCII become '?' (fits_ascii()); spaces at the end of a YAML line are not kept.
std::vector<std::string> chain_history_cards(std::string_view yaml);

}  // namespace starsift::daemon
