// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/sky/sky_truth.hpp"

#include <cinttypes>
#include <cstdio>

namespace starsift {

namespace {

// Positions and speeds to a micro-pixel, everything else to six significant digits: enough to
// compare with what a detector measures, short enough to read.
void append_fixed(std::string& out, const char* key, double value) {
  char text[64];
  const int n = std::snprintf(text, sizeof text, "\"%s\":%.6f", key, value);
  out.append(text, static_cast<std::size_t>(n));
}

void append_general(std::string& out, const char* key, double value) {
  char text[64];
  const int n = std::snprintf(text, sizeof text, "\"%s\":%.6g", key, value);
  out.append(text, static_cast<std::size_t>(n));
}

void append_integer(std::string& out, const char* key, std::uint64_t value) {
  char text[64];
  const int n = std::snprintf(text, sizeof text, "\"%s\":%" PRIu64, key, value);
  out.append(text, static_cast<std::size_t>(n));
}

}  // namespace

void append_json_line(const SkyTruth& truth, std::string& out) {
  out += '{';
  append_integer(out, "frame", truth.frame);
  out += ',';
  append_fixed(out, "shift_x", truth.shift_x);
  out += ',';
  append_fixed(out, "shift_y", truth.shift_y);
  out += ",\"movers\":[";
  bool first = true;
  for (const MoverTruth& m : truth.movers) {
    if (!first) out += ',';
    first = false;
    out += '{';
    append_integer(out, "id", m.id);
    out += ',';
    append_integer(out, "first_frame", m.first_frame);
    out += ',';
    append_fixed(out, "x", m.x);
    out += ',';
    append_fixed(out, "y", m.y);
    out += ',';
    append_fixed(out, "vx", m.vx);
    out += ',';
    append_fixed(out, "vy", m.vy);
    out += ',';
    append_general(out, "flux", m.flux);
    out += ',';
    append_general(out, "peak_snr", m.peak_snr);
    out += ',';
    append_general(out, "noise_sigma_e", m.noise_sigma_e);
    out += ',';
    append_general(out, "noise_sigma_adu", m.noise_sigma_adu);
    out += '}';
  }
  out += "]}\n";
}

std::string to_json_line(const SkyTruth& truth) {
  std::string line;
  append_json_line(truth, line);
  line.pop_back();  // the newline
  return line;
}

}  // namespace starsift
