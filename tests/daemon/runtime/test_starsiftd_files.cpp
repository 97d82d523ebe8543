// SPDX-License-Identifier: LGPL-2.1-or-later
// A file source of FITS frames (an archived night): every frame reaches the JSON lines with
// the UTC of its DATE-OBS, not the time it was processed, in the directory of its night; the
// pipeline ends with the files and the daemon with it.
#include <fitsio.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "daemon_process.hpp"

using namespace starsift::test;
namespace fs = std::filesystem;

namespace {

// A 64x64 unsigned 16-bit frame with a star and a mover, its DATE-OBS `date_obs`.
void write_frame(const fs::path& path, int index, const std::string& date_obs) {
  constexpr int kSide = 64;
  std::vector<std::uint16_t> pixels(kSide * kSide);
  std::uint32_t noise = 12345u + static_cast<std::uint32_t>(index) * 7919u;
  for (int y = 0; y < kSide; ++y) {
    for (int x = 0; x < kSide; ++x) {
      noise = noise * 1664525u + 1013904223u;
      double v = 1000.0 + static_cast<double>(noise >> 24) / 16.0;
      const double star = (x - 20) * (x - 20) + (y - 40) * (y - 40);
      const double mover = (x - 10 - 3 * index) * (x - 10 - 3 * index) + (y - 15) * (y - 15);
      v += 3000.0 * std::exp(-star / 4.0) + 800.0 * std::exp(-mover / 3.0);
      pixels[static_cast<std::size_t>(y) * kSide + x] = static_cast<std::uint16_t>(v);
    }
  }
  fitsfile* f = nullptr;
  int status = 0;
  fits_create_file(&f, ("!" + path.string()).c_str(), &status);
  long axes[2] = {kSide, kSide};
  fits_create_img(f, USHORT_IMG, 2, axes, &status);
  fits_write_key_str(f, "DATE-OBS", date_obs.c_str(), "UTC", &status);
  fits_write_img(f, TUSHORT, 1, kSide * kSide, pixels.data(), &status);
  fits_close_file(f, &status);
  REQUIRE(status == 0);
}

}  // namespace

TEST_CASE("a FITS file source: detections carry each frame's DATE-OBS", "[starsiftd][file]") {
  TempDir dir;
  const fs::path frames = dir.path() / "frames";
  fs::create_directories(frames);
  constexpr int kFrames = 12;
  std::vector<std::string> dates;
  for (int i = 0; i < kFrames; ++i) {
    char date[64];
    // 5 frames a second, from 22:00:00.000 UTC on 27 November 2026.
    std::snprintf(date, sizeof date, "2026-11-27T22:00:%02d.%06d", (i * 200) / 1000,
                  (i * 200 % 1000) * 1000);
    dates.emplace_back(date);
    char name[32];
    std::snprintf(name, sizeof name, "frame_%03d.fits", i);
    write_frame(frames / name, i, date);
  }
  const int port = free_port();
  const fs::path config = dir.path() / "starsiftd.yaml";
  write_file(config, "state-directory: " + (dir.path() / "state").string() +
                         "\nmetrics: {port: " + std::to_string(port) + R"(}
pipelines:
  - name: archive
    source: {file: {path: frames/*.fits}}
    chain: [{whiten: {history: 4}}, {detect: {}}]
    outputs: {preview: {every-s: 0}}
)");
  DaemonProcess daemon({"--config", config.string()}, dir.path() / "starsiftd.log");
  const auto status = daemon.wait_exit(60s);
  INFO(daemon.output());
  REQUIRE(status);
  CHECK(*status == 0);
  CHECK(daemon.output().find("siftfitssrc name=file location=\"" + (frames / "*.fits").string() +
                             "\"") != std::string::npos);
  CHECK(daemon.output().find("every pipeline's source has ended") != std::string::npos);
  const auto lines = files_ending(dir.path() / "state" / "archive", ".jsonl");
  REQUIRE(lines.size() == 1);
  // The night the frames were taken, not the night they were processed.
  CHECK(lines[0].string().find("2026-11-27") != std::string::npos);
  const auto json = read_json_lines(lines[0]);
  REQUIRE(json.size() == kFrames);
  for (int i = 0; i < kFrames; ++i) {
    CHECK(json[i]["utc"].as<std::string>() == dates[i] + "Z");
  }
}

TEST_CASE("a video file source is decoded, every frame through the chain", "[starsiftd][file]") {
  TempDir dir;
  const fs::path video = dir.path() / "night.mkv";
  // 30 frames of H.264 in Matroska, as a recording of an IP camera.
  const std::string make =
      "gst-launch-1.0 -q videotestsrc num-buffers=30 pattern=ball ! "
      "video/x-raw,width=96,height=96,framerate=10/1 ! x264enc ! "
      "matroskamux ! filesink location=" +
      video.string() + " > /dev/null 2>&1";
  if (std::system(make.c_str()) != 0) {
    WARN("SKIPPED: gst-launch-1.0 with x264enc cannot write the test video here");
    return;
  }
  const int port = free_port();
  const fs::path config = dir.path() / "starsiftd.yaml";
  write_file(config, "state-directory: " + (dir.path() / "state").string() +
                         "\nmetrics: {port: " + std::to_string(port) + R"(}
pipelines:
  - name: video
    source: {file: {path: night.mkv}}
    chain: [{whiten: {history: 4}}, {detect: {}}]
    outputs: {preview: {every-s: 0}}
)");
  DaemonProcess daemon({"--config", config.string()}, dir.path() / "starsiftd.log");
  const auto status = daemon.wait_exit(60s);
  INFO(daemon.output());
  REQUIRE(status);
  CHECK(*status == 0);
  const auto lines = files_ending(dir.path() / "state" / "video", ".jsonl");
  REQUIRE(lines.size() == 1);
  CHECK(read_json_lines(lines[0]).size() == 30);
}
