// SPDX-License-Identifier: LGPL-2.1-or-later
// siftfitssrc against FITS files written here with cfitsio, as a camera's capture software or
// starsiftd writes them: pixels and row order, timestamps from DATE-OBS and their UTC meta,
// files that cannot be frames passed over and counted, a loop, and a pattern naming nothing.
// The timestamp arithmetic (FrameClock) and the DATE-OBS parser are checked alone first.
#include <fitsio.h>
#include <gst/app/gstappsink.h>
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "element_support.hpp"
#include "plugins/fits/fits_image.hpp"
#include "plugins/fits/frame_clock.hpp"

using namespace starsift;
using namespace starsift::test;
namespace fs = std::filesystem;

namespace {

constexpr std::int64_t kMs = 1'000'000;

class FitsDir {
 public:
  FitsDir() {
    char pattern[] = "/tmp/starsift-fits-XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~FitsDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::uint16_t pixel_value(int frame, int x, int y) {
  return static_cast<std::uint16_t>(1000 * frame + 7 * x + 300 * y + 40000);
}

// A width x height image, BITPIX 16 with BZERO 32768 (unsigned) or BITPIX 8; FITS row 1 holds
// pixel_value(frame, x, 0).
void write_fits(const fs::path& path, int width, int height, int frame, int bits,
                const char* date_obs) {
  fitsfile* f = nullptr;
  int status = 0;
  const std::string name = "!" + path.string();  // "!": overwrite
  fits_create_file(&f, name.c_str(), &status);
  long axes[2] = {width, height};
  fits_create_img(f, bits == 8 ? BYTE_IMG : USHORT_IMG, 2, axes, &status);
  if (date_obs != nullptr) {
    fits_write_key_str(f, "DATE-OBS", date_obs, "UTC", &status);
  }
  double exptime = 0.05;
  fits_write_key_dbl(f, "EXPTIME", exptime, -6, "s", &status);
  for (int y = 0; y < height; ++y) {
    std::vector<std::uint16_t> row16(static_cast<std::size_t>(width));
    std::vector<std::uint8_t> row8(static_cast<std::size_t>(width));
    for (int x = 0; x < width; ++x) {
      row16[x] = pixel_value(frame, x, y);
      row8[x] = static_cast<std::uint8_t>(row16[x] & 0xff);
    }
    long first[2] = {1, y + 1};
    if (bits == 8) {
      fits_write_pix(f, TBYTE, first, width, row8.data(), &status);
    } else {
      fits_write_pix(f, TUSHORT, first, width, row16.data(), &status);
    }
  }
  fits_close_file(f, &status);
  REQUIRE(status == 0);
}

struct Pulled {
  std::vector<GstBuffer*> buffers;
  std::vector<std::string> warnings;
  std::string error;
  bool eos = false;
  guint64 skipped = 0;
  ~Pulled() {
    for (GstBuffer* b : buffers) gst_buffer_unref(b);
  }
};

// Runs `siftfitssrc <props> ! appsink` until EOS, an error or `max_frames` frames.
void run(const std::string& props, Pulled& out, std::size_t max_frames = 100) {
  init_gstreamer();
  GError* error = nullptr;
  const std::string launch = "siftfitssrc name=src " + props + " ! appsink name=sink sync=false";
  GstElement* pipeline = gst_parse_launch(launch.c_str(), &error);
  REQUIRE(error == nullptr);
  GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  GstElement* src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstBus* bus = gst_element_get_bus(pipeline);
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  while (out.buffers.size() < max_frames) {
    GstSample* sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 5 * GST_SECOND);
    if (sample == nullptr) break;
    out.buffers.push_back(gst_buffer_ref(gst_sample_get_buffer(sample)));
    gst_sample_unref(sample);
  }
  out.eos = gst_app_sink_is_eos(GST_APP_SINK(sink));
  while (GstMessage* m = gst_bus_pop_filtered(
             bus, static_cast<GstMessageType>(GST_MESSAGE_WARNING | GST_MESSAGE_ERROR))) {
    GError* e = nullptr;
    gchar* debug = nullptr;
    if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR) {
      gst_message_parse_error(m, &e, &debug);
      if (out.error.empty()) out.error = e->message;
    } else {
      gst_message_parse_warning(m, &e, &debug);
      out.warnings.emplace_back(e->message);
    }
    g_clear_error(&e);
    g_free(debug);
    gst_message_unref(m);
  }
  GstStructure* stats = nullptr;
  g_object_get(src, "stats", &stats, nullptr);
  gst_structure_get_uint64(stats, "skipped", &out.skipped);
  gst_structure_free(stats);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(bus);
  gst_object_unref(src);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
}

std::optional<GstClockTime> unix_time(GstBuffer* buffer) {
  GstCaps* caps = gst_caps_from_string("timestamp/x-unix");
  GstReferenceTimestampMeta* meta = gst_buffer_get_reference_timestamp_meta(buffer, caps);
  gst_caps_unref(caps);
  if (meta == nullptr) return std::nullopt;
  return meta->timestamp;
}

}  // namespace

TEST_CASE("FrameClock: by date, by rate, dates missing or backwards, loops", "[siftfitssrc]") {
  using fits::FrameClock;
  FrameClock dated(true, 40 * kMs);
  const std::int64_t t0 = 1'700'000'000'000'000;
  CHECK(dated.next(t0).pts_ns == 0);
  CHECK(dated.next(t0 + 100'000).pts_ns == 100 * kMs);
  // A date not after the previous one: one interval (the latest, 100 ms) after it.
  const auto back = dated.next(t0 + 50'000);
  CHECK(back.estimated);
  CHECK(back.pts_ns == 200 * kMs);
  const auto undated = dated.next(std::nullopt);
  CHECK(undated.estimated);
  CHECK(undated.pts_ns == 300 * kMs);
  CHECK(dated.next(t0 + 400'000).pts_ns == 400 * kMs);
  // The sequence again: it goes on one interval after the last frame.
  dated.start_pass();
  CHECK(dated.next(t0).pts_ns == 500 * kMs);
  CHECK(dated.next(t0 + 100'000).pts_ns == 600 * kMs);

  FrameClock rate(false, 40 * kMs);
  CHECK(rate.next(t0).pts_ns == 0);
  CHECK(rate.next(std::nullopt).pts_ns == 40 * kMs);
  rate.start_pass();
  CHECK(rate.next(t0).pts_ns == 80 * kMs);
}

TEST_CASE("DATE-OBS parses to the microsecond; a date alone does not", "[siftfitssrc]") {
  CHECK(fits::parse_fits_utc_us("2026-11-28T01:02:03.456789") ==
        1'795'827'723'456'789);  // date -u -d 2026-11-28T01:02:03Z +%s = 1795827723
  CHECK(fits::parse_fits_utc_us("2026-11-28T01:02:03") == 1'795'827'723'000'000);
  CHECK_FALSE(fits::parse_fits_utc_us("2026-11-28").has_value());
  CHECK_FALSE(fits::parse_fits_utc_us("yesterday").has_value());
}

TEST_CASE("siftfitssrc reads a FITS sequence, stamped from DATE-OBS", "[siftfitssrc]") {
  FitsDir dir;
  constexpr int kWidth = 37, kHeight = 11;  // an odd width: rows are padded in GStreamer
  write_fits(dir.path() / "f0.fits", kWidth, kHeight, 0, 16, "2026-11-28T01:02:03.000000");
  write_fits(dir.path() / "f1.fits", kWidth, kHeight, 1, 16, "2026-11-28T01:02:03.100000");
  // Not frames of the sequence: another size, and a file that is not FITS.
  write_fits(dir.path() / "f2.fits", kWidth + 1, kHeight, 2, 16, "2026-11-28T01:02:03.150000");
  std::ofstream(dir.path() / "f3.fits") << "SIMPLE  = not a FITS file";
  write_fits(dir.path() / "f4.fits", kWidth, kHeight, 4, 16, "2026-11-28T01:02:03.250000");

  Pulled out;
  run("location=" + (dir.path() / "*.fits").string(), out);
  INFO(out.error);
  CHECK(out.error.empty());
  CHECK(out.eos);
  REQUIRE(out.buffers.size() == 3);
  CHECK(out.skipped == 2);
  REQUIRE(out.warnings.size() == 2);
  CHECK(out.warnings[0].find("f2.fits") != std::string::npos);
  CHECK(out.warnings[0].find("38x11 16-bit image, not the first file's 37x11") !=
        std::string::npos);
  CHECK(out.warnings[1].find("f3.fits") != std::string::npos);

  const int frames[] = {0, 1, 4};
  const GstClockTime pts[] = {0, 100 * GST_MSECOND, 250 * GST_MSECOND};
  const GstClockTime utc0 = 1'795'827'723ULL * GST_SECOND;
  for (int i = 0; i < 3; ++i) {
    GstBuffer* b = out.buffers[i];
    CHECK(GST_BUFFER_PTS(b) == pts[i]);
    CHECK(unix_time(b) == utc0 + pts[i]);
    const TestImage image = from_buffer(b, PixelFormat::Gray16, kWidth, kHeight);
    bool same = true;
    for (int y = 0; y < kHeight; ++y) {
      for (int x = 0; x < kWidth; ++x) {
        std::uint16_t v = 0;
        std::memcpy(&v, image.cview().row(y) + 2 * x, 2);
        same = same && v == pixel_value(frames[i], x, y);
      }
    }
    CHECK(same);
  }
}

TEST_CASE("siftfitssrc: 8 bits, a rate, a loop", "[siftfitssrc]") {
  FitsDir dir;
  write_fits(dir.path() / "a.fit", 16, 4, 0, 8, nullptr);
  write_fits(dir.path() / "b.fit", 16, 4, 1, 8, nullptr);
  Pulled out;
  run("location=" + (dir.path() / "*.fit").string() + " loop=true fps=10/1", out, 5);
  REQUIRE(out.buffers.size() == 5);
  for (int i = 0; i < 5; ++i) {
    CHECK(GST_BUFFER_PTS(out.buffers[i]) == static_cast<GstClockTime>(i) * 100 * GST_MSECOND);
    CHECK_FALSE(unix_time(out.buffers[i]).has_value());
  }
  const TestImage image = from_buffer(out.buffers[3], PixelFormat::Gray8, 16, 4);
  CHECK(std::to_integer<int>(image.cview().row(2)[5]) == (pixel_value(1, 5, 2) & 0xff));
}

TEST_CASE("siftfitssrc: a pattern naming nothing, files none of which is a frame",
          "[siftfitssrc]") {
  FitsDir dir;
  Pulled none;
  run("location=" + (dir.path() / "*.fits").string(), none);
  CHECK(none.buffers.empty());
  CHECK(none.error.find("no FITS file matches") != std::string::npos);

  std::ofstream(dir.path() / "x.fits") << "garbage";
  Pulled bad;
  run("location=" + (dir.path() / "x.fits").string(), bad);
  CHECK(bad.buffers.empty());
  CHECK(bad.error.find("none of the 1 files") != std::string::npos);
}
