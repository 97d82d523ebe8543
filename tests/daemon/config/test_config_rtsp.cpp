// SPDX-License-Identifier: LGPL-2.1-or-later
// The top-level `rtsp` section and each pipeline's `outputs.rtsp`: defaults, every key read
// into its field, the views a pipeline serves resolved from both, and every refusal with its
// place, key path and what is allowed.
#include <catch2/catch.hpp>

#include "config_support.hpp"

using namespace starsift::daemon;
using namespace starsift::daemon::test;

namespace {

DaemonConfig parsed(const std::string& yaml) {
  INFO("YAML:\n" << yaml);
  try {
    return parse_daemon_config(yaml, kOrigin, {});
  } catch (const ConfigErrors& e) {
    FAIL("refused:\n" << e.what());
  }
  return {};
}

const std::vector<StreamView> kAllViews = {StreamView::Raw, StreamView::Whitened,
                                           StreamView::Detections};

}  // namespace

TEST_CASE("rtsp: absent, nothing is served; given, its defaults and every view",
          "[daemon][config][rtsp]") {
  SECTION("no section") {
    const DaemonConfig config = parsed(kSkyPipeline);
    CHECK_FALSE(config.rtsp.has_value());
    CHECK(config.pipelines[0].outputs.rtsp.streams.empty());
  }
  SECTION("an empty section") {
    const DaemonConfig config = parsed(kSkyPipeline + "rtsp: {}\n");
    REQUIRE(config.rtsp.has_value());
    const RtspConfig& r = *config.rtsp;
    CHECK(r.address == "127.0.0.1");  // this host only, unless the config says otherwise
    CHECK(r.port == 8554);
    CHECK(r.username.empty());
    CHECK(r.password.empty());
    CHECK(r.encoder == VideoEncoder::Auto);
    CHECK(r.bitrate_kbps == 2000);
    CHECK(config.pipelines[0].outputs.rtsp.streams == kAllViews);
  }
}

TEST_CASE("rtsp: every key is read into its field", "[daemon][config][rtsp]") {
  const DaemonConfig config = parsed(
      kSkyPipeline +
      "rtsp: {address: '::', port: 9554, username: viewer, password: 'p@ss:word', encoder: x264, "
      "bitrate-kbps: 800}\n");
  const RtspConfig& r = *config.rtsp;
  CHECK(r.address == "::");
  CHECK(r.port == 9554);
  CHECK(r.username == "viewer");
  CHECK(r.password == "p@ss:word");
  CHECK(r.encoder == VideoEncoder::X264);
  CHECK(r.bitrate_kbps == 800);
}

TEST_CASE("outputs.rtsp chooses a pipeline's views", "[daemon][config][rtsp]") {
  const std::string two = R"(pipelines:
  - name: a
    source: {sky: {}}
    chain: [{detect: {}}]
    outputs: {rtsp: {streams: [detections, raw]}}
  - name: b
    source: {sky: {}}
    chain: [{detect: {}}]
    outputs: {rtsp: {streams: []}}
rtsp: {}
)";
  const DaemonConfig config = parsed(two);
  CHECK(config.pipelines[0].outputs.rtsp.streams ==
        std::vector<StreamView>{StreamView::Detections, StreamView::Raw});
  CHECK(config.pipelines[1].outputs.rtsp.streams.empty());
  // Without the server, an empty list is no problem: nothing is served either way.
  const DaemonConfig none = parsed(kSkyPipeline.substr(0, kSkyPipeline.size() - 1) +
                                   "\n    outputs: {rtsp: {streams: []}}\n");
  CHECK(none.pipelines[0].outputs.rtsp.streams.empty());
}

TEST_CASE("rtsp: every mistake with its place", "[daemon][config][rtsp][errors]") {
  SECTION("an address that is a host name") {
    require_refused(kSkyPipeline + "rtsp: {address: localhost}\n",
                    {"cfg.yaml:5:17", "rtsp.address", "'localhost' is not an IP address",
                     "127.0.0.1 or ::1 (this host only)"});
  }
  SECTION("a port out of range") {
    require_refused(kSkyPipeline + "rtsp: {port: 0}\n",
                    {"cfg.yaml:5:14", "rtsp.port", "0 is not allowed", "1..65535"});
  }
  SECTION("a user name without a password") {
    require_refused(kSkyPipeline + "rtsp: {username: viewer}\n",
                    {"cfg.yaml:5:18", "rtsp.username", "username without password",
                     "username and password together"});
  }
  SECTION("a user name with a colon") {
    require_refused(kSkyPipeline + "rtsp: {username: 'a:b', password: c}\n",
                    {"cfg.yaml:5:18", "rtsp.username", "is not allowed", "without spaces or ':'"});
  }
  SECTION("an encoder that does not exist") {
    require_refused(kSkyPipeline + "rtsp: {encoder: vp8}\n",
                    {"cfg.yaml:5:17", "rtsp.encoder", "'vp8'", "auto, x264, nvenc"});
  }
  SECTION("a bitrate out of range") {
    require_refused(kSkyPipeline + "rtsp: {bitrate-kbps: 50}\n",
                    {"cfg.yaml:5:22", "rtsp.bitrate-kbps", "50 is not allowed", "100..200000"});
  }
  SECTION("views without a server") {
    require_refused(kSkyPipeline.substr(0, kSkyPipeline.size() - 1) +
                        "\n    outputs: {rtsp: {streams: [raw]}}\n",
                    {"cfg.yaml:5:31", "pipelines[0].outputs.rtsp.streams",
                     "views to serve, but the config has no rtsp section", "a top-level 'rtsp:'"});
  }
  SECTION("a view that does not exist, and one named twice") {
    const std::string yaml = kSkyPipeline.substr(0, kSkyPipeline.size() - 1) +
                             "\n    outputs: {rtsp: {streams: [raw, overlay, raw]}}\nrtsp: {}\n";
    const auto problems = problems_of(yaml);
    REQUIRE(problems.size() == 2);
    CHECK(problems[0].key == "pipelines[0].outputs.rtsp.streams[1]");
    CHECK(problems[0].problem.find("'overlay'") != std::string::npos);
    CHECK(problems[1].key == "pipelines[0].outputs.rtsp.streams[2]");
    CHECK(problems[1].problem == "raw is named twice");
  }
}

TEST_CASE("outputs.clips: defaults, every key, and its refusals", "[daemon][config][clips]") {
  const std::string pipeline = kSkyPipeline.substr(0, kSkyPipeline.size() - 1);
  SECTION("off by default; on, its defaults take the detections view") {
    CHECK_FALSE(parsed(kSkyPipeline).pipelines[0].outputs.clips.enabled);
    const DaemonConfig config = parsed(pipeline + "\n    outputs: {clips: {enabled: true}}\n");
    const ClipsOutput& c = config.pipelines[0].outputs.clips;
    CHECK(c.enabled);
    CHECK(c.view == StreamView::Detections);
    CHECK(c.before_s == 5.0);
    CHECK(c.after_s == 5.0);
    CHECK(c.max_s == 60.0);
    CHECK(c.min_flux == 0.0);
    CHECK(c.max_per_hour == 60);
    CHECK(views_wanted(config.pipelines[0].outputs) ==
          std::vector<StreamView>{StreamView::Detections});
  }
  SECTION("every key") {
    const DaemonConfig config = parsed(
        pipeline +
        "\n    outputs: {clips: {enabled: true, view: raw, before-s: 10, after-s: 20, max-s: 120, "
        "min-flux: 5000, max-per-hour: 0, encoder: x264, bitrate-kbps: 8000}}\n");
    const ClipsOutput& c = config.pipelines[0].outputs.clips;
    CHECK(c.view == StreamView::Raw);
    CHECK(c.before_s == 10.0);
    CHECK(c.after_s == 20.0);
    CHECK(c.max_s == 120.0);
    CHECK(c.min_flux == 5000.0);
    CHECK(c.max_per_hour == 0);
    CHECK(c.encoder == VideoEncoder::X264);
    CHECK(c.bitrate_kbps == 8000);
  }
  SECTION("before-s beyond the ring's minute") {
    const auto problems =
        problems_of(pipeline + "\n    outputs: {clips: {enabled: true, before-s: 90}}\n");
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].key == "pipelines[0].outputs.clips.before-s");
    CHECK(problems[0].allowed.find("60") != std::string::npos);
  }
  SECTION("max-s shorter than one event's clip") {
    const auto problems =
        problems_of(pipeline + "\n    outputs: {clips: {before-s: 5, after-s: 10, max-s: 12}}\n");
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].key == "pipelines[0].outputs.clips.max-s");
    CHECK(problems[0].problem == "12 s is shorter than before-s + after-s (15 s)");
  }
  SECTION("a view that does not exist") {
    const auto problems = problems_of(pipeline + "\n    outputs: {clips: {view: overlay}}\n");
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].key == "pipelines[0].outputs.clips.view");
  }
}
