// SPDX-License-Identifier: LGPL-2.1-or-later
// The metrics' text and /healthz's verdict from snapshots (metrics.hpp).
#include <catch2/catch.hpp>

#include <string>

#include "daemon/runtime/metrics.hpp"

using namespace starsift::daemon;

namespace {

PipelineSnapshot pipeline(const std::string& name, const std::string& state, bool flowing) {
  PipelineSnapshot p;
  p.name = name;
  p.state = state;
  p.flowing = flowing;
  return p;
}

}  // namespace

TEST_CASE("metrics: one series per pipeline, counters and gauges in Prometheus' text",
          "[metrics]") {
  DaemonSnapshot s;
  PipelineSnapshot roof = pipeline("roof", "running", true);
  roof.frames_in = 1200;
  roof.frames_out = 1195;
  roof.dropped = 3;
  roof.restarts = 2;
  roof.fps = 24.98;
  roof.stage_s = {{"0:whiten", 0.0042}};
  s.pipelines = {roof, pipeline("east", "waiting to restart", false)};
  s.clock.synchronised = true;
  s.clock.est_error_us = 412;
  s.reloads = 1;
  const std::string text = metrics_text(s);
  CHECK(text.find("# TYPE starsift_frames_in_total counter\n") != std::string::npos);
  CHECK(text.find("starsift_frames_in_total{pipeline=\"roof\"} 1200\n") != std::string::npos);
  CHECK(text.find("starsift_frames_out_total{pipeline=\"roof\"} 1195\n") != std::string::npos);
  CHECK(text.find("starsift_frames_dropped_total{pipeline=\"roof\"} 3\n") != std::string::npos);
  CHECK(text.find("starsift_restarts_total{pipeline=\"roof\"} 2\n") != std::string::npos);
  CHECK(text.find("starsift_fps{pipeline=\"roof\"} 24.98") != std::string::npos);
  CHECK(text.find("starsift_pipeline_up{pipeline=\"roof\"} 1\n") != std::string::npos);
  CHECK(text.find("starsift_pipeline_up{pipeline=\"east\"} 0\n") != std::string::npos);
  CHECK(text.find("# TYPE starsift_fps gauge\n") != std::string::npos);
  CHECK(text.find("starsift_clock_synchronised 1\n") != std::string::npos);
  CHECK(text.find("starsift_clock_error_seconds 0.000412") != std::string::npos);
  CHECK(text.find("starsift_reloads_total 1\n") != std::string::npos);
  CHECK(text.find("starsift_stage_seconds{pipeline=\"roof\",stage=\"0:whiten\"} 0.0042") !=
        std::string::npos);
}

TEST_CASE("healthz: healthy while frames flow everywhere; a file that ended is done", "[metrics]") {
  DaemonSnapshot s;
  s.pipelines = {pipeline("a", "running", true), pipeline("b", "running", true)};
  std::string body;
  CHECK(healthy(s, &body));
  CHECK(body == "ok\na: running\nb: running\n");

  PipelineSnapshot down = pipeline("b", "waiting to restart", false);
  down.fault = "no frame for 5.0 s (stall-timeout-s 5)";
  s.pipelines[1] = down;
  CHECK_FALSE(healthy(s, &body));
  CHECK(body ==
        "unhealthy\na: running\nb: waiting to restart; no frame for 5.0 s "
        "(stall-timeout-s 5)\n");

  s.pipelines[1] = pipeline("b", "stopped", false);  // a file source that ended
  CHECK(healthy(s, &body));

  CHECK_FALSE(healthy(DaemonSnapshot{}, &body));  // no pipeline at all
}
