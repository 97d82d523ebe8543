// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/outputs/fits_text.hpp"

#include <algorithm>
#include <cstdio>

#include "pipeline/detect/detections_json.hpp"

namespace starsift::daemon {

namespace {

constexpr std::size_t kHistoryText = 72;          // an 80-character card less "HISTORY "
constexpr std::size_t kChunk = kHistoryText - 2;  // less the "| " or "+ " marker

}  // namespace

std::string fits_ascii(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c == '\t') {
      c = ' ';
    } else if (c < 32 || c > 126) {  // char may be signed: UTF-8 bytes are negative then
      c = '?';
    }
  }
  return out;
}

std::string fits_date_obs(std::int64_t utc_us) {
  std::string text = utc_text(utc_us);  // "2026-11-25T01:30:00.123456Z"
  if (!text.empty() && text.back() == 'Z') text.pop_back();
  return text;
}

double modified_julian_date(std::int64_t utc_us) {
  constexpr double kMjdOfUnixEpoch = 40587.0;  // 1970-01-01 00:00 UTC
  return kMjdOfUnixEpoch + static_cast<double>(utc_us) / 86400e6;
}

std::string fits_frame_file_name(std::int64_t utc_us, std::uint64_t frame_number) {
  std::string name;
  for (const char c : utc_text(utc_us)) {  // "2026-11-25T01:30:00.123456Z" -> basic form
    if (c != '-' && c != ':') name += c;
  }
  return name + "_" + std::to_string(frame_number) + ".fits";
}

std::vector<std::string> chain_history_cards(std::string_view yaml) {
  std::vector<std::string_view> lines;
  for (std::size_t start = 0; start < yaml.size();) {
    std::size_t end = yaml.find('\n', start);
    if (end == std::string_view::npos) end = yaml.size();
    std::string_view line = yaml.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    start = end + 1;
  }
  std::vector<std::string> cards;
  cards.push_back("starsift chain: " + std::to_string(lines.size()) +
                  " YAML lines, '| ' starts one, '+ ' goes on");
  for (const std::string_view line : lines) {
    const std::string ascii = fits_ascii(line);
    std::size_t at = 0;
    do {
      std::size_t n = std::min(kChunk, ascii.size() - at);
      // A card never ends in a space where the line goes on: readers drop a card's trailing
      // spaces, and the line would lose them.
      while (at + n < ascii.size() && n > 1 && ascii[at + n - 1] == ' ') --n;
      cards.push_back((at == 0 ? "| " : "+ ") + ascii.substr(at, n));
      at += n;
    } while (at < ascii.size());
  }
  return cards;
}

}  // namespace starsift::daemon
