// SPDX-License-Identifier: LGPL-2.1-or-later
// The translation from a config's pipeline to GStreamer elements (pipeline_plan.hpp), from
// configs parsed by the real config reader.
#include <catch2/catch.hpp>

#include <string>

#include "daemon/config/config_loader.hpp"
#include "daemon/runtime/chain_text.hpp"
#include "daemon/runtime/element_spec.hpp"
#include "daemon/runtime/pipeline_plan.hpp"
#include "pipeline/chain/chain_config.hpp"
#include "pipeline/error.hpp"

using namespace starsift;
using namespace starsift::daemon;

namespace {

// The first pipeline of a config whose `pipelines:` holds `pipeline` (indented as an item).
PipelineConfig pipeline_of(const std::string& pipeline) {
  const std::string text = "state-directory: /tmp/starsift-plan\npipelines:\n" + pipeline;
  return parse_daemon_config(text, "test.yaml").pipelines.at(0);
}

const ElementSpec& element(const PipelinePlan& plan, const std::string& name) {
  const ElementSpec* e = plan.find(name);
  REQUIRE(e != nullptr);
  return *e;
}

}  // namespace

TEST_CASE("a sky pipeline: siftskysrc with its caps, siftchain, then siftdetect", "[plan]") {
  const PipelinePlan plan = plan_pipeline(pipeline_of(R"(
  - name: roof
    source:
      sky: {width: 320, height: 240, fps: 24.98, seed: 7, movers: 3, live: true}
    chain:
      - whiten: {history: 12, gamma: 0.001}
      - detect: {threshold: 5.5, min-area: 4}
    depth: 2
)"));
  CHECK(plan.name == "roof");
  CHECK(plan.live);
  CHECK(plan.source_launch ==
        "siftskysrc name=sky seed=7 movers=3 is-live=true ! capsfilter "
        "caps=\"video/x-raw,format=GRAY16_LE,width=320,height=240,framerate=1249/50\"");
  CHECK(plan.convert.empty());  // the sky writes the chain's format itself

  // Live: frames the chain cannot take are dropped at the queue, never piled up.
  const ElementSpec& queue = element(plan, kChainQueueName);
  CHECK(queue.property("leaky") == "downstream");
  CHECK(queue.property("max-size-buffers") == "4");  // depth + 2

  const ElementSpec& chain = element(plan, kChainName);
  CHECK(chain.factory == "siftchain");
  CHECK(chain.property("depth") == "2");
  CHECK(chain.property("backend") == "auto");
  // The stages before the final detect, every key written out; the parser reads them back.
  const ChainConfig back = parse_chain_yaml(*chain.property("chain"), "chain property");
  REQUIRE(back.stages.size() == 1);
  const auto& whiten = std::get<WhitenParams>(back.stages[0].params);
  CHECK(whiten.history == 12);
  CHECK(whiten.gamma == 0.001);

  const ElementSpec& detect = element(plan, kDetectName);
  CHECK(detect.factory == "siftdetect");
  CHECK(detect.property("threshold") == "5.5");
  CHECK(detect.property("min-area") == "4");
  CHECK(detect.property("background") == "auto");
  CHECK(detect.property("roi-metas") == "false");
  // The tracker's defaults, written out.
  CHECK(detect.property("gate") == "3");
  CHECK(detect.property("confirm") == "3");
  CHECK(detect.property("merge-streaks") == "true");
  CHECK(plan.has_detect);
  CHECK(plan.chain_line.back().factory == "fakesink");

  // The preview is on by default: a frames branch, leaky, that never holds the chain.
  REQUIRE(plan.frames_branch.size() == 2);
  CHECK(plan.frames_branch[0].property("leaky") == "downstream");
  CHECK(plan.frames_branch[1].factory == "appsink");
  CHECK(plan.frames_branch[1].property("drop") == "true");
  CHECK(plan.video_branch.empty());
}

TEST_CASE("a sky that is not live waits for the chain instead of dropping", "[plan]") {
  const PipelinePlan plan = plan_pipeline(pipeline_of(R"(
  - name: fast
    source: {sky: {width: 64, height: 64, live: false, format: GRAY8}}
    chain: [{whiten: {}}, {detect: {}}]
    outputs: {preview: {every-s: 0}}
)"));
  CHECK_FALSE(plan.live);
  CHECK_FALSE(element(plan, kChainQueueName).property("leaky").has_value());
  CHECK(plan.source_launch.find("is-live=false") != std::string::npos);
  CHECK(plan.source_launch.find("format=GRAY8") != std::string::npos);
  CHECK(plan.frames_branch.empty());  // neither FITS nor the preview want frames
}

TEST_CASE("a chain of detect alone has no siftchain; one without detect has no siftdetect",
          "[plan]") {
  const PipelinePlan only_detect = plan_pipeline(pipeline_of(R"(
  - name: a
    source: {sky: {}}
    chain: [{detect: {threshold: 6}}]
)"));
  CHECK(only_detect.find(kChainName) == nullptr);
  CHECK(element(only_detect, kDetectName).property("threshold") == "6");

  const PipelinePlan no_detect = plan_pipeline(pipeline_of(R"(
  - name: b
    source: {sky: {}}
    chain: [{median: {size: 5}}]
)"));
  CHECK(no_detect.find(kDetectName) == nullptr);
  CHECK_FALSE(no_detect.has_detect);
  const ChainConfig back =
      parse_chain_yaml(*element(no_detect, kChainName).property("chain"), "chain property");
  CHECK(std::get<MedianParams>(back.stages.at(0).params).size == 5);
}

TEST_CASE("chain_flow_yaml writes every stage so that the parser reads the same chain",
          "[plan][chain]") {
  const ChainConfig chain = parse_chain_yaml(
      "[{median: {size: 7, border: constant, border-value: 12.5}}, "
      "{whiten: {history: 5, gamma: 0.00001, shift: none, reject: mask, offset: 100, "
      "gain: 3.25, despike: false, output: residual}}, "
      "{detect: {background: mesh, mesh: 32, filter: gaussian, fwhm: 2.5, "
      "threshold-mode: absolute, threshold: 120, connectivity: 4, max-objects: 99, "
      "output: labels}}]",
      "test");
  const std::string text = chain_flow_yaml(chain);
  const ChainConfig back = parse_chain_yaml(text, "round trip");
  REQUIRE(back.stages.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(back.stages[i].filter == chain.stages[i].filter);
    CHECK(back.stages[i].params == chain.stages[i].params);
  }
  // siftdetect's properties carry the detect stage's keys under the same names.
  const auto props = detect_properties(std::get<DetectParams>(chain.stages[2].params));
  CHECK(props.at(0) == std::pair<std::string, std::string>{"background", "mesh"});
  CHECK(props.at(6) == std::pair<std::string, std::string>{"connectivity", "4"});
}

TEST_CASE("camera sources: v4l2, rtsp with bounded waits, aravis with its pixel format", "[plan]") {
  const PipelinePlan v4l2 = plan_pipeline(pipeline_of(R"(
  - name: cam
    source: {v4l2: {device: /dev/video2, width: 640, height: 480, fps: 30, format: MJPG}}
    chain: [{detect: {}}]
)"));
  CHECK(v4l2.source_launch ==
        "v4l2src name=camera device=/dev/video2 ! capsfilter "
        "caps=\"image/jpeg,width=640,height=480,framerate=30/1\" ! jpegdec");
  // Whatever the camera writes becomes a grey format the chain reads.
  REQUIRE(v4l2.convert.size() == 2);
  CHECK(v4l2.convert[0].factory == "videoconvert");
  CHECK(v4l2.convert[1].factory == "video/x-raw,format={GRAY16_LE,GRAY8}");

  const PipelinePlan rtsp = plan_pipeline(pipeline_of(R"(
  - name: ip
    source:
      rtsp: {url: "rtsp://user:secret@10.0.0.5/stream", timeout-s: 2.5, transport: udp,
             latency-ms: 100}
    chain: [{detect: {}}]
)"));
  CHECK(rtsp.source_launch.find("rtspsrc name=camera") == 0);
  CHECK(rtsp.source_launch.find("timeout=2500000 ") != std::string::npos);
  CHECK(rtsp.source_launch.find("tcp-timeout=2500000 ") != std::string::npos);
  // TEARDOWN too gives up after timeout-s: a dead camera never blocks a restart or a stop.
  CHECK(rtsp.source_launch.find("teardown-timeout=2500000000 ") != std::string::npos);
  CHECK(rtsp.source_launch.find("protocols=udp+udp-mcast") != std::string::npos);
  CHECK(rtsp.source_launch.find("latency=100") != std::string::npos);
  CHECK(rtsp.source_launch.find("! decodebin") != std::string::npos);

  const PipelinePlan aravis = plan_pipeline(pipeline_of(R"(
  - name: gige
    source:
      aravis: {camera: Fake-1, exposure-us: 20000, gain-db: 6, fps: 10, pixel-format: Mono12}
    chain: [{whiten: {}}, {detect: {}}]
)"));
  // The camera itself is set to the pixel format and frame rate: no capsfilter, and no
  // videoconvert between the camera and the chain's pool.
  CHECK(aravis.source_launch ==
        "siftcamsrc name=camera camera=Fake-1 exposure-us=20000 gain-db=6 "
        "pixel-format=Mono12 fps=10/1");
  CHECK(aravis.convert.empty());
  // Mono12 reaches GStreamer as GRAY16_LE: the chain is told the real bit depth.
  CHECK(element(aravis, kChainName).property("bit-depth") == "12");
}

TEST_CASE("file and gst sources", "[plan]") {
  const PipelinePlan sequence = plan_pipeline(pipeline_of(R"(
  - name: seq
    source: {file: {path: /data/frame_%06d.png, fps: 10, loop: true}}
    chain: [{detect: {}}]
)"));
  CHECK(sequence.source_launch ==
        "multifilesrc name=file location=/data/frame_%06d.png index=0 loop=true "
        "caps=\"image/png,framerate=10/1\" ! pngdec");
  CHECK_FALSE(sequence.live);
  CHECK_FALSE(sequence.loop_file);  // multifilesrc loops by itself

  const PipelinePlan video = plan_pipeline(pipeline_of(R"(
  - name: vid
    source: {file: {path: "/data/night one.mkv", loop: true}}
    chain: [{detect: {}}]
)"));
  CHECK(video.source_launch == "filesrc name=file location=\"/data/night one.mkv\" ! decodebin");
  CHECK(video.loop_file);

  CHECK_THROWS_AS(plan_pipeline(pipeline_of(R"(
  - name: raw
    source: {file: {path: /data/frame_%06d.fits}}
    chain: [{detect: {}}]
)")),
                  Error);
  CHECK_THROWS_AS(plan_pipeline(pipeline_of(R"(
  - name: raw
    source: {file: {path: /data/frame_%06d.raw}}
    chain: [{detect: {}}]
)")),
                  Error);

  // FITS frames: siftfitssrc, which loops by itself and gives grey frames (no videoconvert).
  const PipelinePlan fits = plan_pipeline(pipeline_of(R"(
  - name: archive
    source: {file: {path: "/data/2026-11-27/*.fits", loop: true, fps: 10}}
    chain: [{detect: {}}]
)"));
  CHECK(fits.source_launch ==
        "siftfitssrc name=file location=\"/data/2026-11-27/*.fits\" loop=true fps=10/1");
  CHECK_FALSE(fits.loop_file);
  CHECK(fits.convert.empty());

  const PipelinePlan gst = plan_pipeline(pipeline_of(R"(
  - name: any
    source: {gst: {launch: "videotestsrc is-live=true ! video/x-raw,width=64,height=64"}}
    chain: [{detect: {}}]
)"));
  CHECK(gst.source_launch == "videotestsrc is-live=true ! video/x-raw,width=64,height=64");
  CHECK(gst.live);
}

TEST_CASE("recordings: x264 by default, NVENC when auto finds it", "[plan]") {
  const std::string yaml = R"(
  - name: rec
    source: {sky: {fps: 20}}
    chain: [{detect: {}}]
    outputs: {video: {enabled: true, segment-s: 30, bitrate-kbps: 900}}
)";
  const PipelinePlan x264 = plan_pipeline(pipeline_of(yaml));
  REQUIRE(x264.video_branch.size() == 5);
  CHECK(x264.video_branch[0].property("leaky") == "downstream");
  const ElementSpec& encoder = element(x264, "encoder");
  CHECK(encoder.factory == "x264enc");
  CHECK(encoder.property("bitrate") == "900");
  CHECK(encoder.property("key-int-max") == "40");  // a key frame every 2 s at 20 fps
  const ElementSpec& mux = element(x264, kRecorderName);
  CHECK(mux.property("max-size-time") == "30000000000");
  CHECK(mux.property("muxer-factory") == "matroskamux");

  const PipelinePlan nvenc = plan_pipeline(pipeline_of(yaml), PlanOptions{true});
  CHECK(element(nvenc, "encoder").factory == "nvh264enc");
}

TEST_CASE("live views tap the raw tee, a tee after siftchain and one after siftdetect",
          "[plan][rtsp]") {
  const auto views_of = [](const std::string& chain, const std::string& streams) {
    const std::string text =
        "state-directory: /tmp/starsift-plan\nrtsp: {}\npipelines:\n"
        "  - name: v\n    source: {sky: {}}\n    chain: " +
        chain + "\n    outputs: {rtsp: {streams: " + streams + "}}\n";
    return plan_pipeline(parse_daemon_config(text, "test.yaml").pipelines.at(0));
  };
  const auto taps = [](const PipelinePlan& plan) {
    std::vector<std::string> out;
    for (const ViewBranch& b : plan.view_branches) {
      out.push_back(std::string(to_string(b.view)) + "<-" + b.tap);
    }
    return out;
  };
  const auto factories = [](const PipelinePlan& plan) {
    std::vector<std::string> out;
    for (const ElementSpec& e : plan.chain_line) out.push_back(e.factory);
    return out;
  };

  SECTION("whiten then detect: all three views") {
    const PipelinePlan plan =
        views_of("[{whiten: {}}, {detect: {}}]", "[raw, whitened, detections]");
    CHECK(taps(plan) ==
          std::vector<std::string>{"raw<-raw", "whitened<-whitened", "detections<-detected"});
    CHECK(factories(plan) ==
          std::vector<std::string>{"queue", "siftchain", "tee", "siftdetect", "tee", "fakesink"});
    CHECK(plan.chain_output == kDetectName);  // the probe reads detect's output, not a tee's
    // Each branch: a leaky queue of one frame, then the appsink; neither makes the line wait.
    const ViewBranch& b = plan.view_branches.front();
    REQUIRE(b.elements.size() == 2);
    CHECK(b.elements[0].property("leaky") == "downstream");
    CHECK(b.elements[0].property("max-size-buffers") == "1");
    CHECK(b.elements[1].name == view_sink_name(StreamView::Raw));
    CHECK(b.elements[1].property("drop") == "true");
    CHECK(plan.describe().find("  detected. ! queue name=view-detections-queue") !=
          std::string::npos);
  }
  SECTION("only the detections view: no whitened tee") {
    const PipelinePlan plan = views_of("[{whiten: {}}, {detect: {}}]", "[detections]");
    CHECK(taps(plan) == std::vector<std::string>{"detections<-detected"});
    CHECK(factories(plan) ==
          std::vector<std::string>{"queue", "siftchain", "siftdetect", "tee", "fakesink"});
  }
  SECTION("no detect stage: the detections view is the chain's output") {
    const PipelinePlan plan = views_of("[{whiten: {}}]", "[detections]");
    CHECK(taps(plan) == std::vector<std::string>{"detections<-whitened"});
    CHECK(plan.chain_output == kChainName);
  }
  SECTION("detect alone: whitened and detections from the raw tee and detect's tee") {
    const PipelinePlan plan = views_of("[{detect: {}}]", "[whitened, detections]");
    CHECK(taps(plan) == std::vector<std::string>{"whitened<-raw", "detections<-detected"});
  }
  SECTION("no views: no branches, no tees") {
    const PipelinePlan plan = views_of("[{whiten: {}}, {detect: {}}]", "[]");
    CHECK(plan.view_branches.empty());
    CHECK(factories(plan) ==
          std::vector<std::string>{"queue", "siftchain", "siftdetect", "fakesink"});
  }
}

TEST_CASE("the H.264 encoder: tuned for latency, a key frame interval in frames", "[plan]") {
  const ElementSpec x264 = h264_encoder(VideoEncoder::Auto, 1500, 50, PlanOptions{false});
  CHECK(x264.factory == "x264enc");
  CHECK(x264.property("tune") == "zerolatency");
  CHECK(x264.property("key-int-max") == "50");
  CHECK(x264.property("bitrate") == "1500");
  const ElementSpec nvenc = h264_encoder(VideoEncoder::Auto, 1500, 50, PlanOptions{true});
  CHECK(nvenc.factory == "nvh264enc");
  CHECK(nvenc.property("gop-size") == "50");
  CHECK(nvenc.property("bframes") == "0");
  CHECK(h264_encoder(VideoEncoder::X264, 100, 1, PlanOptions{true}).factory == "x264enc");
  CHECK(key_frame_interval(25, 2.0) == 50);
  CHECK(key_frame_interval(0, 2.0) == 50);  // no nominal rate: 25 fps assumed
  CHECK(key_frame_interval(0.1, 2.0) == 1);
}

TEST_CASE("launch_quote leaves words alone and quotes the rest", "[plan]") {
  CHECK(launch_quote("GRAY16_LE") == "GRAY16_LE");
  CHECK(launch_quote("/dev/video0") == "/dev/video0");
  CHECK(launch_quote("a b") == "\"a b\"");
  CHECK(launch_quote("say \"hi\"\\") == "\"say \\\"hi\\\"\\\\\"");
  CHECK(launch_quote("") == "\"\"");
  CHECK(number_text(0.0001) == "1e-04");  // the shortest text that reads back the same
  CHECK(number_text(0.001) == "0.001");
  CHECK(number_text(25) == "25");
  CHECK(number_text(24.98) == "24.98");
}

TEST_CASE("the tracker's keys become siftdetect's properties of the same names", "[plan]") {
  const PipelinePlan plan = plan_pipeline(pipeline_of(R"(
  - name: roof
    source:
      sky: {width: 320, height: 240}
    chain:
      - detect: {}
    tracker: {gate: 4.5, confirm: 5, coast: 3, min-speed: 0.25, max-speed: 30, merge-streaks: false}
)"));
  const ElementSpec& detect = element(plan, kDetectName);
  CHECK(detect.property("gate") == "4.5");
  CHECK(detect.property("confirm") == "5");
  CHECK(detect.property("coast") == "3");
  CHECK(detect.property("min-speed") == "0.25");
  CHECK(detect.property("max-speed") == "30");
  CHECK(detect.property("merge-streaks") == "false");
}
