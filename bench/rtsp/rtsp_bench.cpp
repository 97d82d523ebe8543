// SPDX-License-Identifier: LGPL-2.1-or-later
// starsift-bench-rtsp URL SECONDS [USER PASSWORD]: watches one live view for SECONDS and
// prints one JSON line: pictures decoded, how many carried a readable stamp, and the latency
// from the frame's capture (its UTC, stamped by starsiftd run with STARSIFT_VIEW_STAMP=1) to
// the picture leaving this viewer's decoder, on the same host's clock.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "daemon/stream/view_stamp.hpp"
#include "support/rtsp_view_client.hpp"

namespace {

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 5) {
    std::fprintf(stderr, "usage: %s URL SECONDS [USER PASSWORD]\n", argv[0]);
    return 2;
  }
  const std::string url = argv[1];
  const double seconds = std::atof(argv[2]);
  starsift::test::RtspViewClient client(url, argc == 5 ? argv[3] : "", argc == 5 ? argv[4] : "");
  const auto start = std::chrono::steady_clock::now();
  const auto end = start + std::chrono::duration<double>(seconds);
  std::vector<double> latency_ms;
  long pictures = 0;
  std::chrono::steady_clock::time_point first{};
  while (std::chrono::steady_clock::now() < end) {
    const auto picture = client.next(std::chrono::milliseconds(2000));
    if (!picture) {
      if (!client.error().empty() || client.ended()) break;
      continue;
    }
    if (pictures++ == 0) first = std::chrono::steady_clock::now();
    if (const auto stamp = starsift::daemon::read_view_stamp(picture->view())) {
      latency_ms.push_back(
          static_cast<double>(picture->decoded_utc_us - static_cast<std::int64_t>(*stamp)) /
          1000.0);
    }
  }
  const double first_s = pictures > 0 ? std::chrono::duration<double>(first - start).count() : -1.0;
  std::printf(
      "{\"url\": \"%s\", \"seconds\": %.1f, \"pictures\": %ld, \"stamped\": %zu, "
      "\"first_picture_s\": %.3f, \"latency_ms\": {\"median\": %.1f, \"p90\": %.1f, \"p99\": "
      "%.1f, \"max\": %.1f}, \"error\": \"%s\"}\n",
      url.c_str(), seconds, pictures, latency_ms.size(), first_s, percentile(latency_ms, 0.5),
      percentile(latency_ms, 0.9), percentile(latency_ms, 0.99), percentile(latency_ms, 1.0),
      client.error().c_str());
  return pictures > 0 ? 0 : 1;
}
