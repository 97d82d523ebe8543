// SPDX-License-Identifier: LGPL-2.1-or-later
// Valid configs: the defaults of every key left out, every key read into its field, each
// source kind, relative paths, and the equality a reload relies on.
#include <catch2/catch.hpp>

#include "config_support.hpp"
#include "daemon/config/size_text.hpp"
#include "pipeline/error.hpp"

using namespace starsift;
using namespace starsift::daemon;
using namespace starsift::daemon::test;

namespace {

DaemonConfig parsed(const std::string& yaml, const std::filesystem::path& base = {}) {
  INFO("YAML:\n" << yaml);
  try {
    return parse_daemon_config(yaml, kOrigin, base);
  } catch (const ConfigErrors& e) {
    FAIL("refused:\n" << e.what());
  }
  return {};
}

// One pipeline whose source is `source` (a flow map), with the shipped chain.
DaemonConfig with_source(const std::string& source) {
  const DaemonConfig config = parsed("pipelines:\n  - name: cam\n    source: " + source +
                                     "\n    chain: [{whiten: }, {detect: }]\n");
  REQUIRE(config.pipelines.size() == 1);
  return config;
}

}  // namespace

TEST_CASE("a config with one pipeline takes every other key's default", "[daemon][config]") {
  const DaemonConfig config = parsed(kSkyPipeline);
  CHECK(config.state_directory == "/var/lib/starsift");
  CHECK(config.log.level == LogLevel::Info);
  CHECK(config.metrics.address == "127.0.0.1");
  CHECK(config.metrics.port == 9464);
  CHECK(config.metrics.enabled());
  CHECK(config.disk.min_free_bytes == std::uint64_t{5} * 1024 * 1024 * 1024);
  CHECK(config.disk.keep_nights == 0);
  CHECK(config.shutdown_timeout_s == 10.0);

  REQUIRE(config.pipelines.size() == 1);
  const PipelineConfig& sky = config.pipelines[0];
  CHECK(sky.name == "sky");
  REQUIRE(std::holds_alternative<SkySourceConfig>(sky.source));
  const auto& source = std::get<SkySourceConfig>(sky.source);
  CHECK(source.params == SkyParams{});
  CHECK(source.format == PixelFormat::Gray16);
  CHECK(source.fps == FrameRate{25, 1});
  CHECK(source.live);
  REQUIRE(sky.chain.config.stages.size() == 2);
  CHECK(sky.chain.config.stages[0].filter == "whiten");
  CHECK(sky.chain.config.stages[1].filter == "detect");
  CHECK(sky.chain.file.empty());
  CHECK(sky.backend == Backend::Auto);
  CHECK(sky.device == 0);
  CHECK(sky.depth == 3);
  CHECK(sky.stall_timeout_s == 5.0);
  CHECK(sky.restart.initial_s == 1.0);
  CHECK(sky.restart.max_s == 60.0);
  CHECK(sky.outputs.detections.enabled);
  CHECK(sky.outputs.fits.every_s == 0.0);
  CHECK_FALSE(sky.outputs.fits.on_detection);
  CHECK(sky.outputs.fits.max_per_hour == 60);
  CHECK_FALSE(sky.outputs.video.enabled);
  CHECK(sky.outputs.video.segment_s == 600.0);
  CHECK(sky.outputs.video.encoder == VideoEncoder::Auto);
  CHECK(sky.outputs.video.bitrate_kbps == 4000);
  CHECK(sky.outputs.preview.every_s == 5.0);
  // The structs' own defaults are the same as a key left out.
  PipelineConfig defaults;
  defaults.name = "sky";
  defaults.chain = sky.chain;
  CHECK(sky == defaults);
}

TEST_CASE("every global and pipeline key is read into its field", "[daemon][config]") {
  const DaemonConfig config = parsed(
      "state-directory: /srv/starsift\n"
      "log: {level: debug}\n"
      "metrics: {address: '::1', port: 9100}\n"
      "disk: {min-free: 500 MB, keep-nights: 30}\n"
      "shutdown-timeout-s: 2.5\n"
      "pipelines:\n"
      "  - name: north_cam-1\n"
      "    source: {sky: {width: 640, height: 480, fps: 10}}\n"
      "    chain:\n"
      "      - median: {size: 5}\n"
      "    backend: cpu\n"
      "    device: 2\n"
      "    depth: 1\n"
      "    stall-timeout-s: 0.5\n"
      "    restart: {initial-s: 0.25, max-s: 30}\n"
      "    tracker: {gate: 4, confirm: 4, coast: 1, min-speed: 0.2, max-speed: 25, "
      "merge-streaks: false}\n"
      "    outputs:\n"
      "      detections: {enabled: false}\n"
      "      fits: {every-s: 60, on-detection: true, max-per-hour: 0}\n"
      "      video: {enabled: true, segment-s: 300, encoder: x264, bitrate-kbps: 8000}\n"
      "      preview: {every-s: 0}\n");
  CHECK(config.state_directory == "/srv/starsift");
  CHECK(config.log.level == LogLevel::Debug);
  CHECK(config.metrics.address == "::1");
  CHECK(config.metrics.port == 9100);
  CHECK(config.disk.min_free_bytes == 500'000'000);
  CHECK(config.disk.keep_nights == 30);
  CHECK(config.shutdown_timeout_s == 2.5);
  const PipelineConfig& p = config.pipelines.at(0);
  CHECK(p.name == "north_cam-1");
  const auto& sky = std::get<SkySourceConfig>(p.source);
  CHECK(sky.params.width == 640);
  CHECK(sky.params.height == 480);
  CHECK(sky.fps == FrameRate{10, 1});
  const auto& median = std::get<MedianParams>(p.chain.config.stages.at(0).params);
  CHECK(median.size == 5);
  CHECK(p.backend == Backend::Cpu);
  CHECK(p.device == 2);
  CHECK(p.depth == 1);
  CHECK(p.stall_timeout_s == 0.5);
  CHECK(p.restart.initial_s == 0.25);
  CHECK(p.restart.max_s == 30.0);
  CHECK(p.tracker.params.gate == 4.0);
  CHECK(p.tracker.params.confirm == 4);
  CHECK(p.tracker.params.coast == 1);
  CHECK(p.tracker.params.min_speed == 0.2);
  CHECK(p.tracker.params.max_speed == 25.0);
  CHECK_FALSE(p.tracker.merge_streaks);
  CHECK_FALSE(p.outputs.detections.enabled);
  CHECK(p.outputs.fits.every_s == 60.0);
  CHECK(p.outputs.fits.on_detection);
  CHECK(p.outputs.fits.max_per_hour == 0);
  CHECK(p.outputs.video.enabled);
  CHECK(p.outputs.video.segment_s == 300.0);
  CHECK(p.outputs.video.encoder == VideoEncoder::X264);
  CHECK(p.outputs.video.bitrate_kbps == 8000);
  CHECK(p.outputs.preview.every_s == 0.0);
  CHECK(to_string(config.log.level) == "debug");
  CHECK(to_string(p.outputs.video.encoder) == "x264");
}

TEST_CASE("metrics port 0 turns the endpoint off", "[daemon][config]") {
  const DaemonConfig config = parsed("metrics: {port: 0}\n" + kSkyPipeline);
  CHECK(config.metrics.port == 0);
  CHECK_FALSE(config.metrics.enabled());
}

TEST_CASE("the sky source takes siftskysrc's properties by their names", "[daemon][config]") {
  const DaemonConfig config = with_source(
      "{sky: {seed: 18446744073709551615, format: GRAY8, live: false, psf: moffat,"
      " moffat-beta: 2.5, star-density: 50, fwhm: 4, bit-depth: 8, bias: 10, movers: 0,"
      " mover-direction: -1, drift-x: -0.5, jitter: 0}}");
  const auto& sky = std::get<SkySourceConfig>(config.pipelines[0].source);
  CHECK(sky.params.seed == 18446744073709551615ull);
  CHECK(sky.format == PixelFormat::Gray8);
  CHECK_FALSE(sky.live);
  CHECK(sky.params.psf == PsfKind::Moffat);
  CHECK(sky.params.moffat_beta == 2.5);
  CHECK(sky.params.star_density == 50.0);
  CHECK(sky.params.fwhm == 4.0);
  CHECK(sky.params.bit_depth == 8);
  CHECK(sky.params.bias == 10.0);
  CHECK(sky.params.movers == 0);
  CHECK(sky.params.mover_direction == -1.0);
  CHECK(sky.params.drift_x == -0.5);
  CHECK(sky.params.jitter == 0.0);
  CHECK(source_kind(config.pipelines[0].source) == "sky");
}

TEST_CASE("each source kind reads its keys", "[daemon][config]") {
  SECTION("file") {
    const auto config = with_source("{file: {path: /data/night.mkv, loop: true, fps: 30000/1001}}");
    const auto& file = std::get<FileSourceConfig>(config.pipelines[0].source);
    CHECK(file.path == "/data/night.mkv");
    CHECK(file.loop);
    CHECK(file.fps == FrameRate{30000, 1001});
    CHECK(file.fps.str() == "30000/1001");
  }
  SECTION("v4l2, defaults") {
    const auto config = with_source("{v4l2: }");
    const auto& v4l2 = std::get<V4l2SourceConfig>(config.pipelines[0].source);
    CHECK(v4l2 == V4l2SourceConfig{});
    CHECK(v4l2.device == "/dev/video0");
    CHECK_FALSE(v4l2.fps.is_set());
  }
  SECTION("v4l2") {
    const auto config = with_source(
        "{v4l2: {device: /dev/v4l/by-id/usb-cam, width: 1280, height: 720, fps: 24.98,"
        " format: YUY2}}");
    const auto& v4l2 = std::get<V4l2SourceConfig>(config.pipelines[0].source);
    CHECK(v4l2.device == "/dev/v4l/by-id/usb-cam");
    CHECK(v4l2.width == 1280);
    CHECK(v4l2.height == 720);
    CHECK(v4l2.fps == FrameRate{1249, 50});  // 24.98 exactly
    CHECK(v4l2.format == "YUY2");
  }
  SECTION("rtsp") {
    const auto config = with_source(
        "{rtsp: {url: 'rtsp://user:pw@10.0.0.5:554/stream1', latency-ms: 0, timeout-s: 3,"
        " transport: udp}}");
    const auto& rtsp = std::get<RtspSourceConfig>(config.pipelines[0].source);
    CHECK(rtsp.url == "rtsp://user:pw@10.0.0.5:554/stream1");
    CHECK(rtsp.latency_ms == 0);
    CHECK(rtsp.timeout_s == 3.0);
    CHECK(rtsp.transport == RtspTransport::Udp);
    CHECK(to_string(rtsp.transport) == "udp");
  }
  SECTION("rtsp defaults") {
    const auto config = with_source("{rtsp: {url: 'rtsp://cam/1'}}");
    const auto& rtsp = std::get<RtspSourceConfig>(config.pipelines[0].source);
    CHECK(rtsp.latency_ms == 200);
    CHECK(rtsp.timeout_s == 10.0);
    CHECK(rtsp.transport == RtspTransport::Tcp);
  }
  SECTION("aravis: keys left out leave the camera's settings") {
    const auto config = with_source("{aravis: }");
    const auto& aravis = std::get<AravisSourceConfig>(config.pipelines[0].source);
    CHECK(aravis.camera.empty());
    CHECK_FALSE(aravis.exposure_us.has_value());
    CHECK_FALSE(aravis.gain_db.has_value());
    CHECK_FALSE(aravis.fps.is_set());
    CHECK(aravis.pixel_format.empty());
    CHECK(aravis.packet_size == 0);
  }
  SECTION("aravis") {
    const auto config = with_source(
        "{aravis: {camera: Basler-21234567, exposure-us: 40000, gain-db: 12.5, fps: 25,"
        " pixel-format: Mono12, packet-size: 8192}}");
    const auto& aravis = std::get<AravisSourceConfig>(config.pipelines[0].source);
    CHECK(aravis.camera == "Basler-21234567");
    CHECK(aravis.exposure_us == 40000.0);
    CHECK(aravis.gain_db == 12.5);
    CHECK(aravis.fps == FrameRate{25, 1});
    CHECK(aravis.pixel_format == "Mono12");
    CHECK(aravis.packet_size == 8192);
  }
  SECTION("gst") {
    const auto config = with_source("{gst: {launch: 'videotestsrc ! videoconvert'}}");
    const auto& gst = std::get<GstSourceConfig>(config.pipelines[0].source);
    CHECK(gst.launch == "videotestsrc ! videoconvert");
    CHECK(source_kind(config.pipelines[0].source) == "gst");
  }
}

TEST_CASE("frame rates are kept as reduced fractions", "[daemon][config]") {
  const auto rate = [](const std::string& text) {
    return std::get<FileSourceConfig>(
               with_source("{file: {path: a.mkv, fps: " + text + "}}").pipelines[0].source)
        .fps;
  };
  CHECK(rate("25") == FrameRate{25, 1});
  CHECK(rate("25.0") == FrameRate{25, 1});
  CHECK(rate("29.97") == FrameRate{2997, 100});
  CHECK(rate("0.5") == FrameRate{1, 2});
  CHECK(rate("50/2") == FrameRate{25, 1});
  CHECK(rate("'30000/1001'") == FrameRate{30000, 1001});
  CHECK(rate("1000") == FrameRate{1000, 1});
  CHECK(rate("0") == FrameRate{});  // the file's own rate
  CHECK(FrameRate{30000, 1001}.fps() == Approx(29.97002997));
}

TEST_CASE("sizes take decimal and binary units", "[daemon][config]") {
  CHECK(parse_size("5 GiB") == std::uint64_t{5} << 30);
  CHECK(parse_size("5GiB") == std::uint64_t{5} << 30);
  CHECK(parse_size("500 MB") == 500'000'000);
  CHECK(parse_size("1.5 TB") == 1'500'000'000'000);
  CHECK(parse_size("0.5 KiB") == 512);
  CHECK(parse_size("1000") == 1000);
  CHECK(parse_size("0") == 0);
  CHECK(parse_size("1 PiB") == kMaxSizeBytes);
  CHECK_THROWS_AS(parse_size("5 gb"), Error);
  CHECK_THROWS_AS(parse_size("-5 GB"), Error);
  CHECK_THROWS_AS(parse_size("GB"), Error);
  CHECK_THROWS_AS(parse_size("2 PiB"), Error);
  CHECK_THROWS_AS(parse_size("99999999999999999999 B"), Error);
  CHECK(size_text(std::uint64_t{5} << 30) == "5 GiB");
  CHECK(size_text(1000) == "1000 B");
  CHECK(size_text(0) == "0 B");
  CHECK(parsed("disk: {min-free: 0}\n" + kSkyPipeline).disk.min_free_bytes == 0);
}

TEST_CASE("relative paths are taken from the config file's directory", "[daemon][config]") {
  TempDir dir;
  dir.write("chains/wd.yaml", "- whiten:\n- detect:\n");
  const auto path = dir.write("etc/starsiftd.yaml",
                              "state-directory: ../state\n"
                              "pipelines:\n"
                              "  - name: replay\n"
                              "    source: {file: {path: frames/frame_%06d.png, fps: 10}}\n"
                              "    chain: ../chains/wd.yaml\n");
  const DaemonConfig config = load_daemon_config(path);
  CHECK(config.state_directory == dir.path() / "state");
  const PipelineConfig& replay = config.pipelines.at(0);
  CHECK(std::get<FileSourceConfig>(replay.source).path == dir.path() / "etc/frames/frame_%06d.png");
  CHECK(replay.chain.file == dir.path() / "chains/wd.yaml");
  CHECK(replay.chain.config.stages.size() == 2);

  SECTION("parse_daemon_config leaves them relative without a base directory") {
    const DaemonConfig text = parsed("state-directory: ./state\n" + kSkyPipeline);
    CHECK(text.state_directory == "./state");
  }
  SECTION("absolute paths stay as written") {
    const DaemonConfig text = parsed("state-directory: /x/y\n" + kSkyPipeline, "/etc");
    CHECK(text.state_directory == "/x/y");
  }
}

TEST_CASE("equality ignores layout and places, and tells changed pipelines", "[daemon][config]") {
  const std::string two =
      "pipelines:\n"
      "  - name: a\n"
      "    source: {sky: {seed: 1}}\n"
      "    chain: [{whiten: {history: 10}}, {detect: }]\n"
      "  - name: b\n"
      "    source: {sky: {seed: 2}}\n"
      "    chain: [{median: }]\n";
  const DaemonConfig base = parsed(two);

  SECTION("the same config written otherwise is equal") {
    const DaemonConfig other = parsed(
        "# comments and block style move every place\n"
        "pipelines:\n"
        "  - name: a\n"
        "    chain:\n"
        "      - whiten:\n"
        "          history: 10\n"
        "      - detect:\n"
        "    source:\n"
        "      sky: {seed: 1}\n"
        "  - {name: b, source: {sky: {seed: 2}}, chain: [{median: {size: 3}}]}\n");
    CHECK(other == base);
    CHECK(other.pipelines[0].chain.config.stages[0].where !=
          base.pipelines[0].chain.config.stages[0].where);
  }
  SECTION("a changed chain parameter changes that pipeline only") {
    std::string changed = two;
    changed.replace(changed.find("history: 10"), 11, "history: 12");
    const DaemonConfig other = parsed(changed);
    CHECK_FALSE(other == base);
    CHECK_FALSE(other.pipelines[0] == base.pipelines[0]);
    CHECK(other.pipelines[0].source == base.pipelines[0].source);
    CHECK(other.pipelines[1] == base.pipelines[1]);
  }
  SECTION("a changed source or output changes the pipeline") {
    std::string changed = two;
    changed.replace(changed.find("seed: 2"), 7, "seed: 3");
    const DaemonConfig other = parsed(changed);
    CHECK(other.pipelines[0] == base.pipelines[0]);
    CHECK_FALSE(other.pipelines[1] == base.pipelines[1]);
    CHECK(other.pipelines[1].chain == base.pipelines[1].chain);
  }
  SECTION("a chain read from a file equals the same chain inline") {
    TempDir dir;
    const auto chain = dir.write("b.yaml", "chain:\n  - median: {size: 3}\n");
    std::string from_file = two;
    from_file.replace(from_file.find("[{median: }]"), 12, chain.string());
    const DaemonConfig other = parsed(from_file);
    CHECK(other.pipelines[1].chain.file == chain);
    CHECK(other.pipelines[1] == base.pipelines[1]);
  }
  CHECK(base.find_pipeline("b") == &base.pipelines[1]);
  CHECK(base.find_pipeline("c") == nullptr);
}
