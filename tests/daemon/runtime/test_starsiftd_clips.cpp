// SPDX-License-Identifier: LGPL-2.1-or-later
// starsiftd's event clips around confirmed tracks of a synthetic sky: each clip's frames,
// decoded from its Matroska file, carry the capture times starsiftd stamped into them
// (STARSIFT_VIEW_STAMP=1), so the test sees exactly which frames the clip holds: from the key
// frame at or before before-s ahead of the event to after-s past it, none missing; the JSON
// beside it names the event and agrees with the file.
#include <gst/app/gstappsink.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <signal.h>
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "daemon/stream/view_stamp.hpp"
#include "views_support.hpp"

using namespace starsift::test;
namespace fs = std::filesystem;

namespace {

// The stamp of each frame of a Matroska H.264 file, in order; -1 where none reads.
std::vector<std::int64_t> clip_stamps(const fs::path& file) {
  if (!gst_is_initialized()) gst_init(nullptr, nullptr);
  const std::string launch = "filesrc location=\"" + file.string() +
                             "\" ! matroskademux ! h264parse ! avdec_h264 ! videoconvert ! "
                             "video/x-raw,format=GRAY8 ! appsink name=out sync=false";
  GstElement* pipeline = gst_parse_launch(launch.c_str(), nullptr);
  REQUIRE(pipeline != nullptr);
  GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline), "out");
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  std::vector<std::int64_t> stamps;
  while (GstSample* sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 10 * GST_SECOND)) {
    GstVideoInfo info;
    GstVideoFrame frame;
    std::int64_t stamp = -1;
    if (gst_video_info_from_caps(&info, gst_sample_get_caps(sample)) &&
        gst_video_frame_map(&frame, &info, gst_sample_get_buffer(sample), GST_MAP_READ)) {
      const starsift::ConstImageView view{
          static_cast<const std::byte*>(GST_VIDEO_FRAME_PLANE_DATA(&frame, 0)),
          GST_VIDEO_FRAME_WIDTH(&frame), GST_VIDEO_FRAME_HEIGHT(&frame),
          GST_VIDEO_FRAME_PLANE_STRIDE(&frame, 0), starsift::PixelFormat::Gray8};
      if (const auto v = starsift::daemon::read_view_stamp(view)) {
        stamp = static_cast<std::int64_t>(*v);
      }
      gst_video_frame_unmap(&frame);
    }
    stamps.push_back(stamp);
    gst_sample_unref(sample);
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
  return stamps;
}

// "2026-11-28T05:12:34.567890Z" -> µs since the epoch.
std::int64_t utc_us(const std::string& text) {
  std::tm tm{};
  REQUIRE(strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) != nullptr);
  const std::int64_t seconds = timegm(&tm);
  return seconds * 1'000'000 + std::stoll(text.substr(20, 6));
}

}  // namespace

TEST_CASE("an event clip around a confirmed track holds the frames it should",
          "[starsiftd][clips]") {
  ::setenv("STARSIFT_VIEW_STAMP", "1", 1);
  TempDir dir;
  const int port = free_port();
  const fs::path state = dir.path() / "state";
  const fs::path config = dir.path() / "starsiftd.yaml";
  // Tracks confirmed after 4 s of detections: the ring then holds the 2 s before each event.
  write_file(config, view_sky_config(state, port, "",
                                     "clips: {enabled: true, before-s: 2, after-s: 2, max-s: 6, "
                                     "max-per-hour: 2, fits: true, fits-frames: 10}",
                                     "    tracker: {confirm: 40}\n"));
  DaemonProcess daemon({"--config", config.string(), "--summary"}, dir.path() / "starsiftd.log");
  INFO(daemon.output());
  REQUIRE(eventually(
      [&] { return metric(http_get(port, "/metrics").body, "starsift_clips_total", "sky") >= 1; },
      60s));
  daemon.signal(SIGTERM);
  REQUIRE(daemon.wait_exit(30s) == 0);
  const std::string metrics_text = daemon.output();

  const auto records = files_ending(state / "sky", ".json");
  REQUIRE(!records.empty());
  // The first clip: the one that had its full window before the stop.
  const YAML::Node clip = YAML::LoadFile(records.front().string());
  INFO(records.front());
  const YAML::Node event = clip["events"][0];
  CHECK(event["kind"].as<std::string>() == "track");
  CHECK(event["track"].as<int>() >= 0);
  CHECK(clip["view"].as<std::string>() == "detections");
  const fs::path video = records.front().parent_path() / clip["video"].as<std::string>();
  REQUIRE(fs::exists(video));
  const std::int64_t event_us = utc_us(event["utc"].as<std::string>());
  const std::int64_t start_us = utc_us(clip["window_start_utc"].as<std::string>());
  const std::int64_t end_us = utc_us(clip["window_end_utc"].as<std::string>());
  CHECK(start_us == event_us - 2'000'000);
  CHECK(end_us >= event_us + 2'000'000);  // later events may extend it
  CHECK(end_us <= start_us + 6'000'000);  // max-s

  const std::vector<std::int64_t> stamps = clip_stamps(video);
  REQUIRE(!stamps.empty());
  CHECK(static_cast<std::int64_t>(stamps.size()) == clip["frames"].as<std::int64_t>());
  for (const std::int64_t s : stamps) REQUIRE(s > 0);  // every frame is one of the view's
  // From the key frame at or before the window's start (one a second), to its end.
  CHECK(stamps.front() <= start_us);
  CHECK(stamps.front() > start_us - 1'100'000);
  CHECK(stamps.back() <= end_us);
  CHECK(stamps.back() > end_us - 300'000);
  CHECK(utc_us(clip["first_frame_utc"].as<std::string>()) == stamps.front());
  CHECK(utc_us(clip["last_frame_utc"].as<std::string>()) == stamps.back());
  // In capture order, the event's frame among them, none missing (10 fps: 100 ms apart; a
  // frame the busy machine dropped before the view would show as a gap of 200 ms).
  bool has_event = false;
  int gaps = 0;
  for (std::size_t i = 0; i < stamps.size(); ++i) {
    if (stamps[i] == event_us) has_event = true;
    if (i > 0) {
      REQUIRE(stamps[i] > stamps[i - 1]);
      if (stamps[i] - stamps[i - 1] > 150'000) ++gaps;
    }
  }
  CHECK(has_event);
  CHECK(gaps <= 2);
  CHECK(metrics_text.find("clips ") != std::string::npos);

  // The raw frames around the event as a FITS cube: 10 frames, 5 before the event's, each
  // plane's UTC in the FRAMES table.
  REQUIRE(clip["fits"]);
  const fs::path cube = records.front().parent_path() / clip["fits"].as<std::string>();
  REQUIRE(fs::exists(cube));
  CHECK(clip["fits_frames"].as<int>() == 10);
  // Read back by a second reader: astropy (Debian python3-astropy), as the FITS frames are.
  if (run_output("/usr/bin/python3 -c 'import astropy.io.fits' 2>/dev/null && echo yes") !=
      "yes\n") {
    WARN("SKIPPED: the cube's reading by astropy (Debian python3-astropy is not installed)");
    return;
  }
  const std::string python =
      "import sys; from astropy.io import fits; h = fits.open(sys.argv[1]); "
      "d = h[0].data; t = h['FRAMES'].data; "
      "print(d.shape[0], d.shape[1], d.shape[2], len(t), t['DATE-OBS'][5], t['FRAMENUM'][5], "
      "int(d.std() > 0))";
  const std::string out = run_output("/usr/bin/python3 -c \"" + python + "\" " + cube.string());
  INFO(out);
  std::istringstream fields(out);
  int planes = 0, rows = 0, columns = 0, table_rows = 0, varies = 0;
  long sixth_frame = -1;
  std::string sixth_utc;
  fields >> planes >> rows >> columns >> table_rows >> sixth_utc >> sixth_frame >> varies;
  CHECK(planes == 10);
  CHECK(rows == kViewHeight);
  CHECK(columns == kViewWidth);
  CHECK(table_rows == 10);
  CHECK(varies == 1);
  // The sixth plane is the event's frame (FITS DATE-OBS has no 'Z').
  CHECK(sixth_utc + "Z" == event["utc"].as<std::string>());
  CHECK(sixth_frame == event["frame"].as<long>());
}
