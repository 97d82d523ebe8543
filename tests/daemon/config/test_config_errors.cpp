// SPDX-License-Identifier: LGPL-2.1-or-later
// Every kind of mistake outside a chain, each with its file:line:column, key path, what was
// found and what is allowed; and every problem of a file reported at once, in file order.
#include <catch2/catch.hpp>

#include "config_support.hpp"

using namespace starsift::daemon;
using namespace starsift::daemon::test;

namespace {

// The valid pipeline "sky" on lines 1..4, then `more` (whole lines, starting at line 5).
//   1 pipelines:
//   2   - name: sky
//   3     source: {sky: }
//   4     chain: [{whiten: }, {detect: }]
std::string sky_then(const std::string& more) {
  return kSkyPipeline + more;
}

// "pipelines:\n  - name: sky\n    source: <source>\n    chain: ...": the source on line 3,
// its value from column 13.
std::string with_source(const std::string& source) {
  return "pipelines:\n  - name: sky\n    source: " + source +
         "\n    chain: [{whiten: }, {detect: }]\n";
}

}  // namespace

// ---- the document ------------------------------------------------------------------------

TEST_CASE("the document: syntax, emptiness, shape", "[daemon][config][errors]") {
  SECTION("a YAML syntax error, at yaml-cpp's mark") {
    require_refused("pipelines: [\n", {"cfg.yaml:2:1", "",
                                       "YAML syntax error: end of sequence "
                                       "flow not found",
                                       "well-formed YAML"});
  }
  SECTION("an empty file") {
    require_refused("", {"cfg.yaml:1:1", "", "the config is empty", "'pipelines' is required"});
  }
  SECTION("comments only") {
    require_refused("# nothing yet\n",
                    {"cfg.yaml:1:1", "", "the config is empty", "'pipelines' is required"});
  }
  SECTION("not a map") {
    require_refused("- sky\n", {"cfg.yaml:1:1", "", "expected the config (a map), got a sequence",
                                "a map with the keys state-directory, log, metrics"});
  }
  SECTION("a second document") {
    require_refused(sky_then("---\nx: 1\n"),
                    {"cfg.yaml:6:1", "", "a second YAML document (after '---'); found 2",
                     "one document holding the whole config"});
  }
  SECTION("an unknown top-level key, with the key meant") {
    require_refused(
        sky_then("shutdown-timeout: 5\n"),
        {"cfg.yaml:5:1", "", "unknown key 'shutdown-timeout' (did you mean 'shutdown-timeout-s'?)",
         "state-directory, log, metrics, disk, shutdown-timeout-s, pipelines"});
  }
  SECTION("an unknown key far from every known one has no suggestion") {
    const auto problems = problems_of(sky_then("cameras: 2\n"));
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].problem == "unknown key 'cameras'");
  }
  SECTION("a very long unknown name is shown cut, and costs no suggestion table") {
    const std::string name(100000, 'k');
    const auto problems = problems_of("log:\n  level: " + name + "\n" + kSkyPipeline);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].where.str() == "cfg.yaml:2:10");
    CHECK(problems[0].problem ==
          "unknown level '" + std::string(64, 'k') + "\xE2\x80\xA6 (100000 bytes)'");
  }
  SECTION("a key given twice") {
    require_refused(
        "log: {level: info}\nlog: {level: debug}\n" + kSkyPipeline,
        {"cfg.yaml:2:1", "log", "given twice (first at line 1, column 1)", "each key once"});
  }
  SECTION("no pipelines key") {
    require_refused("log: {level: info}\n",
                    {"cfg.yaml:1:1", "pipelines", "missing", "a sequence of pipelines"});
  }
  SECTION("an empty list of pipelines") {
    require_refused("pipelines: []\n", {"cfg.yaml:1:12", "pipelines",
                                        "a config needs at least one pipeline", "1 to 64"});
  }
  SECTION("pipelines: with nothing") {
    require_refused("pipelines:\n", {"cfg.yaml:1:1", "pipelines",
                                     "a config needs at least one pipeline", "1 to 64"});
  }
  SECTION("pipelines not a sequence") {
    require_refused("pipelines: {name: a}\n",
                    {"cfg.yaml:1:12", "pipelines", "expected a sequence of pipelines, got a map",
                     "each a map with name, source and chain"});
  }
  SECTION("more pipelines than the limit: refused before any is read") {
    std::string many = "pipelines: [";
    for (int i = 0; i < kMaxPipelines + 1; ++i) many += "{name: x}, ";
    many += "]\n";
    require_refused(many, {"cfg.yaml:1:12", "pipelines", "65 pipelines, more than the limit of 64",
                           "1 to 64 pipelines"});
  }
}

// ---- global settings ---------------------------------------------------------------------

TEST_CASE("global settings: types, ranges, names", "[daemon][config][errors]") {
  SECTION("state-directory of the wrong type") {
    require_refused(
        "state-directory: [x]\n" + kSkyPipeline,
        {"cfg.yaml:1:18", "state-directory", "expected text, got a sequence", "a directory path"});
  }
  SECTION("state-directory empty") {
    require_refused("state-directory: ''\n" + kSkyPipeline,
                    {"cfg.yaml:1:18", "state-directory", "is empty", "a directory path"});
  }
  SECTION("an unknown log level") {
    require_refused("log: {level: verbose}\n" + kSkyPipeline,
                    {"cfg.yaml:1:14", "log.level", "unknown level 'verbose'",
                     "trace, debug, info, warn, error, critical"});
  }
  SECTION("a misspelt log level") {
    require_refused("log: {level: debgu}\n" + kSkyPipeline,
                    {"cfg.yaml:1:14", "log.level", "unknown level 'debgu' (did you mean 'debug'?)",
                     "trace, debug"});
  }
  SECTION("log not a map") {
    require_refused("log: debug\n" + kSkyPipeline,
                    {"cfg.yaml:1:6", "log", "expected the log settings (a map), got 'debug'",
                     "a map with the keys level"});
  }
  SECTION("a metrics address that is a host name") {
    require_refused("metrics: {address: localhost}\n" + kSkyPipeline,
                    {"cfg.yaml:1:20", "metrics.address", "'localhost' is not an IP address",
                     "127.0.0.1 or ::1"});
  }
  SECTION("a metrics port out of range") {
    require_refused("metrics: {port: 70000}\n" + kSkyPipeline,
                    {"cfg.yaml:1:17", "metrics.port", "70000 is not allowed",
                     "0 (no metrics endpoint) or 1..65535"});
  }
  SECTION("a size with an unknown unit") {
    require_refused("disk: {min-free: 5 gigs}\n" + kSkyPipeline,
                    {"cfg.yaml:1:18", "disk.min-free",
                     "'5 gigs' is not a size (unknown unit "
                     "'gigs')",
                     "GiB"});
  }
  SECTION("a negative size") {
    require_refused("disk: {min-free: -1 GB}\n" + kSkyPipeline,
                    {"cfg.yaml:1:18", "disk.min-free", "'-1 GB' is not a size", "a number >= 0"});
  }
  SECTION("keep-nights below 0") {
    require_refused(
        "disk: {keep-nights: -1}\n" + kSkyPipeline,
        {"cfg.yaml:1:21", "disk.keep-nights", "-1 is not allowed", "0 (no limit) or 1..36500"});
  }
  SECTION("an unknown key in a settings map") {
    require_refused("disk: {min-free: 1 GiB, free: 1}\n" + kSkyPipeline,
                    {"cfg.yaml:1:25", "disk", "unknown key 'free'", "min-free, keep-nights"});
  }
  SECTION("a shutdown timeout of 0") {
    require_refused("shutdown-timeout-s: 0\n" + kSkyPipeline,
                    {"cfg.yaml:1:21", "shutdown-timeout-s", "0 is not allowed",
                     "finite numbers above 0 up to 600 s"});
  }
  SECTION("a quoted number") {
    require_refused("shutdown-timeout-s: '5'\n" + kSkyPipeline,
                    {"cfg.yaml:1:21", "shutdown-timeout-s",
                     "expected a number, got '5' (a quoted string: write the number without "
                     "quotes)",
                     "finite numbers above 0"});
  }
}

// ---- a pipeline's own keys ---------------------------------------------------------------

TEST_CASE("pipelines: names", "[daemon][config][errors]") {
  SECTION("a name with capitals and a space") {
    require_refused("pipelines:\n  - name: Sky 1\n    source: {sky: }\n    chain: [{median: }]\n",
                    {"cfg.yaml:2:11", "pipelines[0].name", "'Sky 1' is not allowed",
                     "1 to 32 characters a-z, 0-9, '_' and '-'"});
  }
  SECTION("a name of 33 characters") {
    const std::string name(33, 'a');
    require_refused(
        "pipelines:\n  - name: " + name + "\n    source: {sky: }\n    chain: [{median: }]\n",
        {"cfg.yaml:2:11", "pipelines[0].name", name + "' is not allowed", "1 to 32 characters"});
  }
  SECTION("a name starting with '-'") {
    require_refused("pipelines:\n  - name: _cam\n    source: {sky: }\n    chain: [{median: }]\n",
                    {"cfg.yaml:2:11", "pipelines[0].name", "'_cam' is not allowed",
                     "the first a letter or digit"});
  }
  SECTION("no name") {
    require_refused("pipelines:\n  - source: {sky: }\n    chain: [{median: }]\n",
                    {"cfg.yaml:2:5", "pipelines[0].name", "missing", "1 to 32 characters"});
  }
  SECTION("two pipelines of the same name") {
    require_refused(
        sky_then("  - name: sky\n    source: {sky: {seed: 2}}\n    chain: [{median: }]\n"),
        {"cfg.yaml:5:11", "pipelines[1].name", "'sky' is already the name of pipelines[0] (line 2)",
         "a name of its own for each pipeline"});
  }
  SECTION("a pipeline that is not a map") {
    require_refused("pipelines:\n  - sky\n",
                    {"cfg.yaml:2:5", "pipelines[0]", "expected a pipeline (a map), got 'sky'",
                     "a map with the keys name, source, chain"});
  }
}

TEST_CASE("pipelines: backend, device, depth, timeouts, restart", "[daemon][config][errors]") {
  SECTION("depth above the engine's limit") {
    require_refused(sky_then("    depth: 9\n"),
                    {"cfg.yaml:5:12", "pipelines[0].depth", "9 is not allowed", "1..8"});
  }
  SECTION("depth as a word") {
    require_refused(sky_then("    depth: three\n"), {"cfg.yaml:5:12", "pipelines[0].depth",
                                                     "expected an integer, got 'three'", "1..8"});
  }
  SECTION("depth as a decimal") {
    require_refused(sky_then("    depth: 3.0\n"), {"cfg.yaml:5:12", "pipelines[0].depth",
                                                   "expected an integer, got '3.0'", "1..8"});
  }
  SECTION("a negative device") {
    require_refused(sky_then("    device: -1\n"),
                    {"cfg.yaml:5:13", "pipelines[0].device", "-1 is not allowed", "0..1023"});
  }
  SECTION("an unknown backend") {
    require_refused(sky_then("    backend: gpu\n"), {"cfg.yaml:5:14", "pipelines[0].backend",
                                                     "unknown backend 'gpu'", "auto, cuda, cpu"});
  }
  SECTION("a negative stall timeout") {
    require_refused(sky_then("    stall-timeout-s: -1\n"),
                    {"cfg.yaml:5:22", "pipelines[0].stall-timeout-s", "-1 is not allowed",
                     "finite numbers above 0 up to 3600 s"});
  }
  SECTION("a misspelt pipeline key") {
    require_refused(sky_then("    stall-timeout: 5\n"),
                    {"cfg.yaml:5:5", "pipelines[0]",
                     "unknown key 'stall-timeout' (did you mean 'stall-timeout-s'?)",
                     "name, source, chain, backend, device, depth, stall-timeout-s"});
  }
  SECTION("restart's max-s below its initial-s") {
    require_refused(sky_then("    restart: {initial-s: 10, max-s: 5}\n"),
                    {"cfg.yaml:5:37", "pipelines[0].restart.max-s",
                     "5 s is less than initial-s 10 s", "max-s >= initial-s"});
  }
  SECTION("restart's initial-s above the default max-s") {
    require_refused(sky_then("    restart: {initial-s: 100}\n"),
                    {"cfg.yaml:5:14", "pipelines[0].restart.max-s",
                     "60 s is less than initial-s 100 s", "max-s >= initial-s"});
  }
  SECTION("the tracker: siftdetect's ranges, its keys") {
    require_refused(sky_then("    tracker: {gate: 0}\n"),
                    {"cfg.yaml:5:21", "pipelines[0].tracker.gate", "0 is not allowed",
                     "finite numbers above 0 up to 1000 px"});
    require_refused(
        sky_then("    tracker: {confirm: 0}\n"),
        {"cfg.yaml:5:24", "pipelines[0].tracker.confirm", "0 is not allowed", "1..100"});
    require_refused(sky_then("    tracker: {gates: 3}\n"),
                    {"cfg.yaml:5:15", "pipelines[0].tracker",
                     "unknown key 'gates' (did you mean 'gate'?)", "gate, confirm, coast"});
  }
  SECTION("tracking set in the chain's detect stage: starsiftd takes it from `tracker`") {
    require_refused(
        "pipelines:\n  - name: sky\n    source: {sky: {}}\n"
        "    chain: [{whiten: }, {detect: {confirm: 5}}]\n",
        {"cfg.yaml:4:26", "pipelines[0].chain[1].detect",
         "sets merge-streaks or the tracker (gate, confirm, coast, min-speed, max-speed)",
         "those keys under the pipeline's `tracker:`"});
  }
  SECTION("a stall timeout shorter than the source's frame interval, given") {
    require_refused(
        with_source("{sky: {fps: 0.1}}") + "    stall-timeout-s: 8\n",
        {"cfg.yaml:5:22", "pipelines[0].stall-timeout-s",
         "8 s is not longer than the source's frame interval (10 s)", "more than 10 s"});
  }
  SECTION("the default stall timeout and an exposure longer: placed at the source") {
    require_refused(with_source("{aravis: {exposure-us: 8e6}}"),
                    {"cfg.yaml:3:13", "pipelines[0].stall-timeout-s",
                     "5 s is not longer than the source's frame interval (8 s)", "more than 8 s"});
  }
}

TEST_CASE("pipelines: outputs", "[daemon][config][errors]") {
  SECTION("an unknown encoder") {
    require_refused(sky_then("    outputs: {video: {encoder: h265}}\n"),
                    {"cfg.yaml:5:32", "pipelines[0].outputs.video.encoder",
                     "unknown encoder 'h265'", "auto, x264, nvenc"});
  }
  SECTION("a bitrate below the least") {
    require_refused(sky_then("    outputs: {video: {bitrate-kbps: 10}}\n"),
                    {"cfg.yaml:5:37", "pipelines[0].outputs.video.bitrate-kbps",
                     "10 is not allowed", "100..200000"});
  }
  SECTION("a segment of 0 s") {
    require_refused(sky_then("    outputs: {video: {segment-s: 0}}\n"),
                    {"cfg.yaml:5:34", "pipelines[0].outputs.video.segment-s", "0 is not allowed",
                     "finite numbers above 0 up to 86400 s"});
  }
  SECTION("a FITS period that is not finite") {
    require_refused(sky_then("    outputs: {fits: {every-s: .nan}}\n"),
                    {"cfg.yaml:5:31", "pipelines[0].outputs.fits.every-s", ".nan is not allowed",
                     "finite numbers from 0 up to 86400 s (0: none on a schedule)"});
  }
  SECTION("on-detection not a boolean") {
    require_refused(sky_then("    outputs: {fits: {on-detection: yes}}\n"),
                    {"cfg.yaml:5:36", "pipelines[0].outputs.fits.on-detection",
                     "expected a boolean, got 'yes'", "true or false"});
  }
  SECTION("a misspelt output") {
    require_refused(
        sky_then("    outputs: {previews: {every-s: 1}}\n"),
        {"cfg.yaml:5:15", "pipelines[0].outputs",
         "unknown key 'previews' (did you mean 'preview'?)", "detections, fits, video, preview"});
  }
  SECTION("a negative preview period") {
    require_refused(sky_then("    outputs: {preview: {every-s: -1}}\n"),
                    {"cfg.yaml:5:34", "pipelines[0].outputs.preview.every-s", "-1 is not allowed",
                     "(0: no preview)"});
  }
}

// ---- sources -----------------------------------------------------------------------------

TEST_CASE("sources: kinds", "[daemon][config][errors]") {
  SECTION("an unknown kind") {
    require_refused(with_source("{camera: {}}"),
                    {"cfg.yaml:3:14", "pipelines[0].source", "unknown source kind 'camera'",
                     "sky, file, v4l2, rtsp, aravis, gst"});
  }
  SECTION("a misspelt kind") {
    require_refused(with_source("{aravsi: {}}"),
                    {"cfg.yaml:3:14", "pipelines[0].source",
                     "unknown source kind 'aravsi' (did you mean 'aravis'?)", "aravis"});
  }
  SECTION("two kinds in one source") {
    require_refused(
        with_source("{sky: , file: {path: a.mkv}}"),
        {"cfg.yaml:3:21", "pipelines[0].source",
         "a second source kind, 'file', after 'sky' (line 3)", "exactly one kind per source"});
  }
  SECTION("no kind") {
    require_refused(with_source("{}"),
                    {"cfg.yaml:3:13", "pipelines[0].source",
                     "expected a source (a map with one key, the kind), got an empty map",
                     "one key naming the kind"});
  }
  SECTION("the kind without its colon") {
    require_refused(with_source("sky"),
                    {"cfg.yaml:3:13", "pipelines[0].source",
                     "got 'sky' (for the defaults write 'sky:'", "one key naming the kind"});
  }
  SECTION("no source") {
    require_refused("pipelines:\n  - name: sky\n    chain: [{median: }]\n",
                    {"cfg.yaml:2:5", "pipelines[0].source", "missing", "sky, file, v4l2"});
  }
  SECTION("a kind's settings that are not a map") {
    require_refused(with_source("{sky: 5}"), {"cfg.yaml:3:19", "pipelines[0].source.sky",
                                              "expected the sky settings (a map), got '5'",
                                              "a map with the keys width, height"});
  }
  SECTION("an unknown key of a kind") {
    require_refused(with_source("{sky: {fromat: GRAY8}}"),
                    {"cfg.yaml:3:20", "pipelines[0].source.sky",
                     "unknown key 'fromat' (did you mean 'format'?)", "width, height, seed"});
  }
}

TEST_CASE("sources: the sky's parameters, by SkyParams' rules", "[daemon][config][errors]") {
  SECTION("a field out of its range") {
    require_refused(
        with_source("{sky: {fwhm: 0.1}}"),
        {"cfg.yaml:3:26", "pipelines[0].source.sky.fwhm", "0.1 is not allowed", "0.5..20"});
  }
  SECTION("an integer field given a word, with its range") {
    require_refused(with_source("{sky: {movers: many}}"),
                    {"cfg.yaml:3:28", "pipelines[0].source.sky.movers",
                     "expected an integer, got 'many'", "0..10000"});
  }
  SECTION("width 0") {
    require_refused(
        with_source("{sky: {width: 0}}"),
        {"cfg.yaml:3:27", "pipelines[0].source.sky.width", "0 is not allowed", "1..65536"});
  }
  SECTION("a negative seed") {
    require_refused(with_source("{sky: {seed: -1}}"),
                    {"cfg.yaml:3:26", "pipelines[0].source.sky.seed", "-1 is not allowed",
                     "0..18446744073709551615"});
  }
  SECTION("min above max: the pair, at the sky") {
    require_refused(with_source("{sky: {mover-snr-min: 20}}"),
                    {"cfg.yaml:3:19", "pipelines[0].source.sky",
                     "sky parameter mover-snr-min 20 exceeds mover-snr-max 10",
                     "mover-snr-min <= mover-snr-max"});
  }
  SECTION("a bias above what GRAY8 holds") {
    require_refused(with_source("{sky: {format: GRAY8, bias: 300}}"),
                    {"cfg.yaml:3:19", "pipelines[0].source.sky",
                     "not below the saturation of GRAY8", "0..254"});
  }
  SECTION("a format the sky does not render through its caps") {
    require_refused(with_source("{sky: {format: GRAY32F}}"),
                    {"cfg.yaml:3:28", "pipelines[0].source.sky.format", "unknown format 'GRAY32F'",
                     "GRAY16_LE, GRAY8"});
  }
  SECTION("a frame rate of 0") {
    require_refused(with_source("{sky: {fps: 0}}"), {"cfg.yaml:3:25", "pipelines[0].source.sky.fps",
                                                     "0 is not allowed", "a frame rate above 0"});
  }
  SECTION("an unknown psf") {
    require_refused(
        with_source("{sky: {psf: airy}}"),
        {"cfg.yaml:3:25", "pipelines[0].source.sky.psf", "unknown psf 'airy'", "gaussian, moffat"});
  }
}

TEST_CASE("sources: cameras, files, streams", "[daemon][config][errors]") {
  SECTION("aravis: an exposure of 0") {
    require_refused(with_source("{aravis: {exposure-us: 0}}"),
                    {"cfg.yaml:3:36", "pipelines[0].source.aravis.exposure-us", "0 is not allowed",
                     "finite numbers from 1 up to 6e+08 us"});
  }
  SECTION("aravis: a negative gain") {
    require_refused(with_source("{aravis: {gain-db: -1}}"),
                    {"cfg.yaml:3:32", "pipelines[0].source.aravis.gain-db", "-1 is not allowed",
                     "finite numbers from 0 up to 100 dB"});
  }
  SECTION("aravis: a pixel format in the wrong case") {
    require_refused(with_source("{aravis: {pixel-format: mono12}}"),
                    {"cfg.yaml:3:37", "pipelines[0].source.aravis.pixel-format",
                     "unknown pixel-format 'mono12' (did you mean 'Mono12'?)",
                     "Mono8, Mono10, Mono12, Mono16"});
  }
  SECTION("aravis: a packet size below the least") {
    require_refused(with_source("{aravis: {packet-size: 100}}"),
                    {"cfg.yaml:3:36", "pipelines[0].source.aravis.packet-size",
                     "100 is not allowed", "0 (negotiated with the camera) or 576..9000"});
  }
  SECTION("rtsp: no URL") {
    require_refused(with_source("{rtsp: {latency-ms: 10}}"),
                    {"cfg.yaml:3:20", "pipelines[0].source.rtsp.url", "missing",
                     "rtsp://[user:password@]host"});
  }
  SECTION("rtsp: not an RTSP URL") {
    require_refused(with_source("{rtsp: {url: 'http://cam/1'}}"),
                    {"cfg.yaml:3:26", "pipelines[0].source.rtsp.url",
                     "'http://cam/1' is not an RTSP URL", "rtsp://"});
  }
  SECTION("rtsp: a misspelt transport") {
    require_refused(with_source("{rtsp: {url: 'rtsp://cam', transport: tpc}}"),
                    {"cfg.yaml:3:51", "pipelines[0].source.rtsp.transport",
                     "unknown transport 'tpc' (did you mean 'tcp'?)", "tcp, udp, auto"});
  }
  SECTION("rtsp: a timeout of 0") {
    require_refused(with_source("{rtsp: {url: 'rtsp://cam', timeout-s: 0}}"),
                    {"cfg.yaml:3:51", "pipelines[0].source.rtsp.timeout-s", "0 is not allowed",
                     "finite numbers above 0 up to 600 s"});
  }
  SECTION("v4l2: a relative device") {
    require_refused(with_source("{v4l2: {device: video0}}"),
                    {"cfg.yaml:3:29", "pipelines[0].source.v4l2.device",
                     "'video0' is not an absolute path", "/dev/video0"});
  }
  SECTION("v4l2: a format GStreamer spells otherwise") {
    require_refused(with_source("{v4l2: {format: YUYV}}"),
                    {"cfg.yaml:3:29", "pipelines[0].source.v4l2.format",
                     "unknown format 'YUYV' (did you mean 'YUY2'?)", "GRAY8, GRAY16_LE, YUY2"});
  }
  SECTION("file: no path") {
    require_refused(
        with_source("{file: {loop: true}}"),
        {"cfg.yaml:3:20", "pipelines[0].source.file.path", "missing",
         "a video file, an image sequence such as frames/frame_%06d.png, or FITS frames"});
  }
  SECTION("file: a frame rate that is a word") {
    require_refused(
        with_source("{file: {path: a.mkv, fps: fast}}"),
        {"cfg.yaml:3:39", "pipelines[0].source.file.fps", "expected a frame rate, got 'fast'",
         "as 25, 24.98 or 30000/1001; 0 for the "
         "source's own"});
  }
  SECTION("file: a frame rate above the most") {
    require_refused(with_source("{file: {path: a.mkv, fps: 2000}}"),
                    {"cfg.yaml:3:39", "pipelines[0].source.file.fps", "2000 is not allowed",
                     "above 0 up to 1000"});
  }
  SECTION("file: a frame rate over 0") {
    require_refused(with_source("{file: {path: a.mkv, fps: 1/0}}"),
                    {"cfg.yaml:3:39", "pipelines[0].source.file.fps",
                     "expected a frame rate, got '1/0'", "30000/1001"});
  }
  SECTION("gst: an empty launch line") {
    require_refused(with_source("{gst: {launch: ''}}"),
                    {"cfg.yaml:3:28", "pipelines[0].source.gst.launch", "is empty",
                     "a gst-launch description"});
  }
}

// ---- all at once -------------------------------------------------------------------------

TEST_CASE("every problem of a file is reported, in the order of the file",
          "[daemon][config][errors]") {
  const std::string yaml =
      "log: {level: loud}\n"                                         // 1
      "metrics: {port: -5}\n"                                        // 2
      "pipelines:\n"                                                 // 3
      "  - name: a\n"                                                // 4
      "    source: {sky: {fwhm: 99}}\n"                              // 5
      "    chain:\n"                                                 // 6
      "      - median: {size: 4}\n"                                  // 7
      "    depth: 0\n"                                               // 8
      "  - name: a\n"                                                // 9
      "    source: {rtsp: {url: 'rtsp://cam', latency-ms: fast}}\n"  // 10
      "    chain: [{whiten: {fit: future}}]\n"                       // 11
      "    outputs: {video: {encoder: h265}}\n"                      // 12
      "shutdown-timeout-s: 1000\n";                                  // 13
  const std::vector<ConfigProblem> problems = problems_of(yaml);
  for (const ConfigProblem& problem : problems) UNSCOPED_INFO(problem.str());
  REQUIRE(problems.size() == 10);
  check_problem(problems[0], {"cfg.yaml:1:14", "log.level", "unknown level 'loud'", "info"});
  check_problem(problems[1], {"cfg.yaml:2:17", "metrics.port", "-5 is not allowed", "1..65535"});
  check_problem(problems[2],
                {"cfg.yaml:5:26", "pipelines[0].source.sky.fwhm", "99 is not allowed", "0.5..20"});
  check_problem(problems[3], {"cfg.yaml:7:24", "pipelines[0].chain[0].median.size",
                              "4 is not allowed", "odd values 3..31"});
  check_problem(problems[4], {"cfg.yaml:8:12", "pipelines[0].depth", "0 is not allowed", "1..8"});
  check_problem(problems[5],
                {"cfg.yaml:9:11", "pipelines[1].name",
                 "'a' is already the name of pipelines[0] (line 4)", "a name of its own"});
  check_problem(problems[6], {"cfg.yaml:10:52", "pipelines[1].source.rtsp.latency-ms",
                              "expected an integer, got 'fast'", "0..10000"});
  check_problem(problems[7], {"cfg.yaml:11:28", "pipelines[1].chain[0].whiten.fit",
                              "unknown whiten fit 'future'", "current, past"});
  check_problem(problems[8], {"cfg.yaml:12:32", "pipelines[1].outputs.video.encoder",
                              "unknown encoder 'h265'", "auto, x264, nvenc"});
  check_problem(problems[9],
                {"cfg.yaml:13:21", "shutdown-timeout-s", "1000 is not allowed", "up to 600 s"});
}

TEST_CASE("ConfigErrors carries the problems as lines", "[daemon][config][errors]") {
  try {
    parse_daemon_config("log: {level: loud}\nmetrics: {port: -5}\n" + kSkyPipeline, "x.yaml");
    FAIL("accepted");
  } catch (const starsift::Error& e) {  // a catch of the project's one error type sees them all
    CHECK(std::string(e.what()) ==
          "x.yaml:1:14: log.level: unknown level 'loud'; allowed: trace, debug, info, warn, "
          "error, critical\n"
          "x.yaml:2:17: metrics.port: -5 is not allowed; allowed: 0 (no metrics endpoint) or "
          "1..65535");
  }
}
