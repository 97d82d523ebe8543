// SPDX-License-Identifier: LGPL-2.1-or-later
// One frame as a FITS file, through cfitsio: <night dir>/fits/<UTC time>_<frame number>.fits.
//
// GRAY8 is written as BITPIX 8, GRAY16 as BITPIX 16 with BZERO 32768 (FITS has no unsigned
// 16-bit type; readers give back the unsigned values), GRAY32F as BITPIX -32; every sample
// bit for bit. Row y of the frame is FITS row y + 1, so a detection at (x, y) is FITS pixel
// (x + 1, y + 1) and numpy's data[y, x] (viewers that draw row 1 at the bottom show the frame
// upside down). The header (docs/outputs.md, "FITS frames") says when (DATE-OBS to the
// microsecond), how long (EXPTIME), from what (INSTRUME, PIPELINE, FRAMENUM), through which
// chain (HISTORY), by what (CREATOR) and how good the host clock was (CLK*, CLOCK).
//
// The file is written under a temporary name (".part" added), synced, and renamed: a crash
// leaves at most a *.fits.part, never a half .fits.
#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <span>
#include <string>

#include "daemon/outputs/clock_state.hpp"
#include "pipeline/image.hpp"
#include "pipeline/pixel_format.hpp"

namespace starsift::daemon {

// What stays the same from one frame of a pipeline to the next.
struct FitsPipelineInfo {
  std::string pipeline;    // PIPELINE: the pipeline's name in the config
  std::string source;      // INSTRUME: the source's description (camera model, URL, "sky")
  std::string chain_yaml;  // HISTORY: the chain as the config gives it
};

struct FitsFrame {
  ConstImageView image;  // GRAY8, GRAY16 or GRAY32F, on the host; rows may be padded
  // The frame's FrameShape::significance: set for whitening's significance output, whose
  // samples mean (sample - offset) / gain sigmas (SIGOFFS, SIGGAIN).
  SignificanceScale significance{};
  std::int64_t utc_us = 0;         // DATE-OBS: the frame's UTC, µs since 1970
  std::uint64_t frame_number = 0;  // FRAMENUM
  double exposure_s = std::numeric_limits<double>::quiet_NaN();  // EXPTIME; NaN: unknown
};

struct FitsWriteOptions {
  // fsync(2) the file before the rename and the directory after it: a power cut then leaves
  // either the whole file or none. Off only where speed matters more (tests, tmpfs).
  bool sync = true;
};

// Writes `frame` into <night_dir>/fits/ (created when missing) and returns the file's path.
// Throws Error naming the file and the reason, with cfitsio's status text when cfitsio failed;
// nothing is left behind then.
std::filesystem::path write_fits_frame(const std::filesystem::path& night_dir,
                                       const FitsFrame& frame, const FitsPipelineInfo& pipeline,
                                       const ClockState& clock, FitsWriteOptions options = {});

// Frames of one size and format as one FITS cube (NAXIS3 = the frames, in order) at `path`,
// its header the first frame's (DATE-OBS, FRAMENUM of the first), and a binary table
// extension FRAMES with each plane's FRAMENUM and DATE-OBS (UTC to the microsecond): an event
// clip's raw frames (docs/live-video.md, "Event clips"). Written as write_fits_frame() writes
// a frame: a temporary name, synced, renamed. Throws Error naming the file and the reason.
void write_fits_cube(const std::filesystem::path& path, std::span<const FitsFrame> frames,
                     const FitsPipelineInfo& pipeline, const ClockState& clock,
                     FitsWriteOptions options = {});

// "starsift 0.1.0": CREATOR, the software and its version.
const char* software_name_and_version() noexcept;

}  // namespace starsift::daemon
