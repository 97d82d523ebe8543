// SPDX-License-Identifier: LGPL-2.1-or-later
// starsiftd as a process on a small synthetic sky: READY, STATUS and WATCHDOG on a notify
// socket, metrics over HTTP, then SIGTERM mid-stream: STOPPING, exit 0 within the stated
// time, and every file complete (JSON lines parse, FITS frames open in cfitsio, the preview
// is a PNG, the recording plays through a demuxer).
#include <fitsio.h>
#include <gst/gst.h>
#include <signal.h>
#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <regex>
#include <string>
#include <thread>

#include "daemon_process.hpp"

using namespace starsift::test;
namespace fs = std::filesystem;

namespace {

// The sky small enough to run in real time on two CPU cores beside other tests.
std::string sky_config(const fs::path& state, int port) {
  return small_sky_config(state, port,
                          R"(      fits: {every-s: 1, on-detection: true, max-per-hour: 5}
      video: {enabled: true, segment-s: 2, encoder: x264, bitrate-kbps: 500}
      preview: {every-s: 1}
)");
}

struct FitsImage {
  long width = 0, height = 0;
  std::string date_obs;
};

FitsImage read_fits(const fs::path& path) {
  fitsfile* f = nullptr;
  int status = 0;
  fits_open_diskfile(&f, path.c_str(), READONLY, &status);
  FitsImage image;
  long axes[2] = {0, 0};
  int naxis = 0;
  fits_get_img_dim(f, &naxis, &status);
  fits_get_img_size(f, 2, axes, &status);
  char date[FLEN_VALUE] = {};
  fits_read_key(f, TSTRING, "DATE-OBS", date, nullptr, &status);
  std::vector<unsigned short> pixels(static_cast<std::size_t>(axes[0] * axes[1]));
  long first[2] = {1, 1};
  int any_null = 0;
  fits_read_pix(f, TUSHORT, first, static_cast<long long>(pixels.size()), nullptr, pixels.data(),
                &any_null, &status);
  int ignored = 0;
  fits_close_file(f, &ignored);
  INFO(path.string() << ": cfitsio status " << status);
  REQUIRE(status == 0);
  REQUIRE(naxis == 2);
  image.width = axes[0];
  image.height = axes[1];
  image.date_obs = date;
  return image;
}

// Frames a demuxer reads from a recording, or -1 when it cannot play it.
int demuxed_frames(const fs::path& file) {
  gst_init(nullptr, nullptr);
  GError* error = nullptr;
  const std::string description =
      "filesrc location=\"" + file.string() + "\" ! matroskademux ! fakesink name=out";
  GstElement* pipeline = gst_parse_launch(description.c_str(), &error);
  if (pipeline == nullptr) {
    g_clear_error(&error);
    return -1;
  }
  int frames = 0;
  GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline), "out");
  GstPad* pad = gst_element_get_static_pad(sink, "sink");
  gst_pad_add_probe(
      pad, GST_PAD_PROBE_TYPE_BUFFER,
      [](GstPad*, GstPadProbeInfo*, gpointer data) {
        ++*static_cast<int*>(data);
        return GST_PAD_PROBE_OK;
      },
      &frames, nullptr);
  gst_object_unref(pad);
  gst_object_unref(sink);
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstBus* bus = gst_element_get_bus(pipeline);
  GstMessage* message = gst_bus_timed_pop_filtered(
      bus, 10 * GST_SECOND, static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  const bool ok = message != nullptr && GST_MESSAGE_TYPE(message) == GST_MESSAGE_EOS;
  if (message != nullptr) gst_message_unref(message);
  gst_object_unref(bus);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
  return ok ? frames : -1;
}

}  // namespace

TEST_CASE("starsiftd runs a sky, reports to systemd and stops cleanly on SIGTERM",
          "[starsiftd][run]") {
  TempDir dir;
  const int port = free_port();
  const fs::path config = dir.path() / "starsiftd.yaml";
  write_file(config, sky_config(dir.path() / "state", port));
  NotifySocket notify(dir.path() / "notify.sock");
  DaemonProcess daemon({"--config", config.string()}, dir.path() / "starsiftd.log",
                       {&notify, std::chrono::microseconds(400'000)});
  INFO(daemon.output());

  // Type=notify: READY=1 once frames flow, then STATUS= lines and watchdog pings.
  REQUIRE(notify.wait_for("READY=1", 30s));
  REQUIRE(notify.wait_for("STATUS=sky:", 10s));
  const auto status = notify.wait_for("fps", 10s);
  REQUIRE(status);
  CHECK(notify.messages()[*status].find("detections") != std::string::npos);
  REQUIRE(notify.wait_for("WATCHDOG=1", 5s));

  // Metrics and health over HTTP while it runs.
  REQUIRE(eventually(
      [&] {
        return metric(http_get(port, "/metrics").body, "starsift_frames_out_total", "sky") > 25;
      },
      20s));
  const HttpReply metrics = http_get(port, "/metrics");
  CHECK(metrics.status == 200);
  CHECK(metric(metrics.body, "starsift_pipeline_up", "sky") == 1.0);
  CHECK(metric(metrics.body, "starsift_fps", "sky") == Approx(25.0).epsilon(0.02));
  CHECK(metric(metrics.body, "starsift_restarts_total", "sky") == 0.0);
  // siftchain's own times: whitening's stage on the latest frame.
  REQUIRE(eventually(
      [&] {
        return http_get(port, "/metrics")
                   .body.find("starsift_stage_seconds{pipeline=\"sky\",stage=\"0:whiten\"} ") !=
               std::string::npos;
      },
      5s));
  const HttpReply health = http_get(port, "/healthz");
  CHECK(health.status == 200);
  CHECK(health.body.rfind("ok\n", 0) == 0);
  CHECK(http_get(port, "/nothing").status == 404);

  // Long enough for a recording segment of 2 s to close and another to be open.
  std::this_thread::sleep_for(3s);
  const auto stop_sent = std::chrono::steady_clock::now();
  daemon.signal(SIGTERM);
  REQUIRE(notify.wait_for("STOPPING=1", 5s));
  // shutdown-timeout-s 5, plus kTeardownGraceS (2 s) at most, plus the files.
  const auto exit_status = daemon.wait_exit(10s);
  const double stop_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - stop_sent).count();
  REQUIRE(exit_status);
  CHECK(*exit_status == 0);
  CHECK(stop_s < 7.5);

  // JSON lines: each parses, frame numbers rise, every line has its UTC, rate and clock.
  const auto jsonl = files_ending(dir.path() / "state" / "sky", ".jsonl");
  REQUIRE(jsonl.size() == 1);
  const auto lines = read_json_lines(jsonl[0]);
  REQUIRE(lines.size() > 50);
  std::int64_t previous = -1;
  for (const auto& line : lines) {
    const auto frame = line["frame"].as<std::int64_t>();
    CHECK(frame > previous);
    previous = frame;
    CHECK(line["utc"].as<std::string>().size() == 27);  // 2026-11-25T01:30:00.123456Z
    CHECK(line["clock"].IsMap());
    CHECK(line["objects"].IsSequence());
  }
  CHECK(lines.back()["fps"].as<double>() == Approx(25.0).epsilon(0.02));
  std::size_t movers = 0;
  for (const auto& line : lines) movers = std::max(movers, line["tracks"].size());
  CHECK(movers > 0);  // bright movers are tracked

  // FITS frames: complete files (none left half written) that cfitsio reads.
  const auto fits = files_ending(dir.path() / "state" / "sky", ".fits");
  REQUIRE(fits.size() >= 3);
  CHECK(files_ending(dir.path() / "state", ".part").empty());
  for (const auto& f : fits) {
    const FitsImage image = read_fits(f);
    CHECK(image.width == 160);
    CHECK(image.height == 120);
    CHECK(image.date_obs.size() >= 26);  // to the microsecond
  }

  // The preview: a PNG of the three panels side by side.
  const fs::path preview = dir.path() / "state" / "sky" / "preview.png";
  REQUIRE(fs::exists(preview));
  std::ifstream png(preview, std::ios::binary);
  char signature[8] = {};
  png.read(signature, 8);
  CHECK(std::string(signature + 1, 3) == "PNG");

  // Recordings: segments of 2 s, each playable to its end, the last one finished by EOS.
  const auto videos = files_ending(dir.path() / "state" / "sky", ".mkv");
  REQUIRE(videos.size() >= 2);
  for (const auto& v : videos) {
    INFO(v.string());
    CHECK(demuxed_frames(v) > 0);
  }

  const std::string log = daemon.output();
  // backend auto: CUDA where a GPU is usable, else the CPU.
  CHECK(std::regex_search(log, std::regex("frames flow \\(backend (cpu|cuda:0)\\)")));
  CHECK(log.find("stopped: end of stream reached every output") != std::string::npos);
}

TEST_CASE("starsiftd --duration runs in the foreground and prints a summary", "[starsiftd][run]") {
  TempDir dir;
  const fs::path config = dir.path() / "demo.yaml";
  write_file(config, std::string("state-directory: state\nmetrics: {port: 0}\n") + R"(pipelines:
  - name: sky
    source: {sky: {width: 128, height: 128, fps: 20, movers: 3, mover-snr-min: 20,
                   mover-snr-max: 40}}
    chain: [{whiten: {history: 6}}, {detect: {}}]
    outputs: {preview: {every-s: 1}}
)");
  const auto start = std::chrono::steady_clock::now();
  DaemonProcess daemon({"--config", config.string(), "--duration", "4"}, dir.path() / "out.log");
  const auto status = daemon.wait_exit(20s);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string out = daemon.output();
  INFO(out);
  REQUIRE(status);
  CHECK(*status == 0);
  CHECK(took >= 4.0);
  CHECK(took < 12.0);
  CHECK(std::regex_search(out, std::regex("pipeline sky \\(backend (cpu|cuda:0)\\)")));
  // Three movers at a time; one that leaves the frame is replaced by a new one.
  CHECK(out.find("sky truth") != std::string::npos);
  CHECK(out.find("% of mover-frames with a detection within 3 px") != std::string::npos);
  // Relative paths are the config file's: the files are in <dir>/state.
  CHECK(out.find((dir.path() / "state" / "sky").string()) != std::string::npos);
  CHECK(fs::exists(dir.path() / "state" / "sky" / "preview.png"));
}

TEST_CASE("under systemd's journal stream the log goes to the journal, not to stderr",
          "[starsiftd][run]") {
  TempDir dir;
  const fs::path config = dir.path() / "demo.yaml";
  write_file(config, std::string("state-directory: state\nmetrics: {port: 0}\n") + R"(pipelines:
  - name: sky
    source: {sky: {width: 64, height: 64, fps: 20}}
    chain: [{detect: {}}]
)");
  DaemonEnvironment journal;
  journal.journal = true;
  DaemonProcess daemon({"--config", config.string(), "--duration", "2"}, dir.path() / "out.log",
                       journal);
  const auto status = daemon.wait_exit(20s);
  const std::string out = daemon.output();
  INFO(out);
  REQUIRE(status);
  CHECK(*status == 0);
  // The summary is the program's output (stdout); the log lines went to sd_journal_send.
  CHECK(std::regex_search(out, std::regex("pipeline sky \\(backend (cpu|cuda:0)\\)")));
  CHECK(out.find("frames flow") == std::string::npos);
  CHECK(out.find(" info ") == std::string::npos);
}

TEST_CASE("starsiftd refuses a config with mistakes, starting nothing", "[starsiftd][run]") {
  TempDir dir;
  const fs::path config = dir.path() / "bad.yaml";
  write_file(config, "state-directory: state\npipelines:\n  - name: a\n    sourc: {sky: {}}\n");
  DaemonProcess daemon({"--config", config.string()}, dir.path() / "out.log");
  const auto status = daemon.wait_exit(10s);
  const std::string out = daemon.output();
  INFO(out);
  REQUIRE(status);
  CHECK(*status == 2);
  CHECK(out.find(config.string() + ":4:5:") != std::string::npos);
  CHECK(out.find("nothing started") != std::string::npos);
  CHECK_FALSE(fs::exists(dir.path() / "state"));
}
