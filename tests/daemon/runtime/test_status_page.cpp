// SPDX-License-Identifier: LGPL-2.1-or-later
// The status page from snapshots (status_page.hpp): the HTML escapes every text it shows and
// loads nothing from elsewhere, the JSON parses (yaml-cpp reads JSON) and holds the values,
// and a preview request names a pipeline, never a file.
#include <yaml-cpp/yaml.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "daemon/runtime/status_page.hpp"

using namespace starsift::daemon;

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

DaemonSnapshot running_sky() {
  DaemonSnapshot s;
  PipelineSnapshot p;
  p.name = "roof";
  p.state = "running";
  p.flowing = true;
  p.backend = "cuda:0";
  p.frames_in = 123456;
  p.frames_out = 123450;
  p.dropped = 3;
  p.overrun = 2;
  p.detections = 98765;
  p.mover_reports = 4321;
  p.objects = 17;
  p.movers = 4;
  p.restarts = 1;
  p.fps = 24.98;
  p.latency_s = 0.125;
  p.previews = 7;
  p.preview = "/var/lib/starsift/roof/preview.png";
  p.mqtt = true;
  p.mqtt_connected = true;
  p.mqtt_published = 500;
  p.mqtt_queued = 2;
  // Oldest first, as FrameOutputs keeps them.
  p.recent_movers = {
      MoverReport{5, 1000, 1'764'034'200'000'000, 10.5f, 20.25f, 1.5f, -0.5f, 37.5f, -12.5f, 812.0f,
                  9},
      MoverReport{6, 1002, 1'764'034'200'080'000, 100.0f, 200.0f, 0.0f, 2.0f, 0.0f, 50.0f, 99.5f,
                  3},
  };
  s.pipelines.push_back(p);
  s.clock.readable = true;
  s.clock.synchronised = true;
  s.clock.est_error_us = 412;
  s.clock.source = "chronyd";
  s.uptime_s = 90061;  // 1 d 01:01:01
  s.reloads = 2;
  s.reload_failures = 1;
  s.ready = true;
  return s;
}

}  // namespace

TEST_CASE("status page: the JSON parses and holds the snapshot's values", "[status]") {
  const YAML::Node j = YAML::Load(status_json(running_sky()));
  CHECK(j["ready"].as<bool>());
  CHECK_FALSE(j["stopping"].as<bool>());
  CHECK(j["reloads"].as<int>() == 2);
  CHECK(j["reload_failures"].as<int>() == 1);
  CHECK(j["uptime_s"].as<double>() == Approx(90061));
  CHECK(j["clock"]["synchronised"].as<bool>());
  CHECK(j["clock"]["est_error_us"].as<int>() == 412);
  CHECK(j["clock"]["source"].as<std::string>() == "chronyd");
  REQUIRE(j["pipelines"].size() == 1);
  const YAML::Node p = j["pipelines"][0];
  CHECK(p["name"].as<std::string>() == "roof");
  CHECK(p["state"].as<std::string>() == "running");
  CHECK(p["backend"].as<std::string>() == "cuda:0");
  CHECK(p["frames_in"].as<std::uint64_t>() == 123456);
  CHECK(p["frames_out"].as<std::uint64_t>() == 123450);
  CHECK(p["dropped"].as<int>() == 3);
  CHECK(p["overrun"].as<int>() == 2);
  CHECK(p["detections"].as<int>() == 98765);
  CHECK(p["objects"].as<int>() == 17);
  CHECK(p["movers"].as<int>() == 4);
  CHECK(p["restarts"].as<int>() == 1);
  CHECK(p["fps"].as<double>() == Approx(24.98));
  CHECK(p["latency_s"].as<double>() == Approx(0.125));
  CHECK(p["preview"].as<std::string>() == "/preview/roof.png");  // the URL, never the file
  CHECK(p["previews"].as<int>() == 7);
  CHECK(p["mqtt"]["connected"].as<bool>());
  CHECK(p["mqtt"]["published"].as<int>() == 500);
  CHECK(p["mqtt"]["queued"].as<int>() == 2);
  const YAML::Node movers = p["recent_movers"];
  REQUIRE(movers.size() == 2);
  CHECK(movers[0]["track"].as<int>() == 6);  // newest first
  CHECK(movers[1]["track"].as<int>() == 5);
  CHECK(movers[1]["frame"].as<int>() == 1000);
  CHECK(movers[1]["utc"].as<std::string>() == "2025-11-25T01:30:00.000000Z");
  CHECK(movers[1]["x"].as<double>() == Approx(10.5));
  CHECK(movers[1]["y"].as<double>() == Approx(20.25));
  CHECK(movers[1]["vx"].as<double>() == Approx(1.5));
  CHECK(movers[1]["vy"].as<double>() == Approx(-0.5));
  CHECK(movers[1]["vx_s"].as<double>() == Approx(37.5));
  CHECK(movers[1]["flux"].as<double>() == Approx(812));
  CHECK(movers[1]["detections"].as<int>() == 9);
  CHECK_FALSE(contains(status_json(running_sky()), "/var/lib"));
}

TEST_CASE("status page: JSON strings escaped, no preview and no MQTT are null, NaN is null",
          "[status]") {
  DaemonSnapshot s;
  PipelineSnapshot p;
  p.name = "a\"b\\c";
  p.state = "waiting to restart";
  p.fault = "source: \"camera\" said\nno\tframes \x01";
  p.fps = std::nan("");
  s.pipelines.push_back(p);
  s.clock.readable = false;
  s.clock.error = "ntp_adjtime: \"not permitted\"";
  const YAML::Node j = YAML::Load(status_json(s));
  const YAML::Node q = j["pipelines"][0];
  CHECK(q["name"].as<std::string>() == "a\"b\\c");
  CHECK(q["fault"].as<std::string>() == "source: \"camera\" said\nno\tframes \x01");
  CHECK(q["fps"].IsNull());
  CHECK(q["preview"].IsNull());
  CHECK(q["mqtt"].IsNull());
  CHECK(q["recent_movers"].size() == 0);
  CHECK(j["clock"]["error"].as<std::string>() == "ntp_adjtime: \"not permitted\"");
  CHECK_FALSE(j["clock"]["synchronised"].as<bool>());
}

TEST_CASE("status page: the HTML shows the values and escapes every text", "[status]") {
  DaemonSnapshot s = running_sky();
  const std::string html = status_html(s);
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(contains(html, "<span data-k=\"name\">roof</span>"));
  CHECK(contains(html, "data-k=\"state\" data-state=\"running\">running</span>"));
  CHECK(contains(html, "<span data-k=\"frames_in\">123456</span>"));
  CHECK(contains(html, "<span data-k=\"fps\">24.98</span>"));
  CHECK(contains(html, "<span data-k=\"mqtt\">connected, 500 published, 2 queued"));
  CHECK(contains(html, "src=\"/preview/roof.png?n=7\""));
  CHECK(contains(html, "1 d 01:01:01"));
  CHECK(contains(html, "synchronised (chronyd), error \u00b1412 \u00b5s"));
  s.clock.est_error_us = 16'000'000;
  CHECK(contains(status_html(s), "synchronised (chronyd), error \u00b116.0 s"));
  s.clock.est_error_us = 2'500;
  CHECK(contains(status_html(s), "synchronised (chronyd), error \u00b12.5 ms"));
  // The movers, newest first: track 6 before track 5.
  const auto six = html.find("<tr><td>6</td>"), five = html.find("<tr><td>5</td>");
  REQUIRE(six != std::string::npos);
  REQUIRE(five != std::string::npos);
  CHECK(six < five);
  CHECK(contains(html, "<td>10.5</td><td>20.2</td><td>1.50</td><td>-0.50</td><td>39.5</td>"));
  // Works offline: nothing loaded from another host; the fallback without the script.
  CHECK_FALSE(contains(html, "http://"));
  CHECK_FALSE(contains(html, "https://"));
  CHECK_FALSE(contains(html, "src=\"//"));
  CHECK(contains(html, "<noscript><meta http-equiv=\"refresh\""));
  CHECK(contains(html, "fetch('/status.json'"));

  // Names and faults are text, never markup (a name from the config is a-z0-9_- already, but
  // the page does not rely on it; a fault is any element's message).
  s.pipelines[0].name = "<img src=x onerror=alert(1)>";
  s.pipelines[0].fault = "</p><script>alert('x')</script> & \"more\"";
  s.pipelines[0].state = "waiting to restart";
  s.pipelines[0].backend = "<b>";
  s.clock.source = "<i>";
  const std::string bad = status_html(s);
  CHECK_FALSE(contains(bad, "<img src=x"));
  CHECK_FALSE(contains(bad, "<script>alert"));
  CHECK_FALSE(contains(bad, "<b>"));
  CHECK_FALSE(contains(bad, "<i>"));
  CHECK(contains(bad, "&lt;img src=x onerror=alert(1)&gt;"));
  CHECK(contains(
      bad, "&lt;/p&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;more&quot;"));
  CHECK(contains(bad, "data-state=\"waiting to restart\""));
  // Exactly one script: the page's own.
  CHECK(bad.find("<script>") == bad.rfind("<script>"));
}

TEST_CASE("status page: without a preview or MQTT, the page says so", "[status]") {
  DaemonSnapshot s = running_sky();
  s.pipelines[0].preview.clear();
  s.pipelines[0].mqtt = false;
  s.pipelines[0].recent_movers.clear();
  const std::string html = status_html(s);
  CHECK(contains(html, "<img data-k=\"preview\" alt=\"preview of roof\" hidden>"));
  CHECK(contains(html, "<p class=\"none\" data-k=\"no_preview\">no preview yet"));
  CHECK(contains(html, "<tr data-k=\"mqtt_row\" hidden>"));
  CHECK(contains(html, "no movers reported yet"));
  // No pipelines at all.
  s.pipelines.clear();
  CHECK(contains(status_html(s), "<p class=\"none\" data-k=\"no_pipelines\">no pipelines</p>"));
}

TEST_CASE("status page: a preview request names a pipeline, percent-decoded", "[status]") {
  CHECK(preview_url("roof") == "/preview/roof.png");
  CHECK(preview_request("/preview/roof.png") == std::optional<std::string>("roof"));
  CHECK(preview_request("/preview/ro%6Ff.png") == std::optional<std::string>("roof"));
  // Decoded to a name that no pipeline has: the server answers 404 for it.
  CHECK(preview_request("/preview/..%2F..%2Fetc%2Fpasswd.png") ==
        std::optional<std::string>("../../etc/passwd"));
  CHECK_FALSE(preview_request("/preview/.png"));
  CHECK_FALSE(preview_request("/preview/roof.jpg"));
  CHECK_FALSE(preview_request("/preview/roof"));
  CHECK_FALSE(preview_request("/previews/roof.png"));
  CHECK_FALSE(preview_request("/preview/ro%zzf.png"));
  CHECK_FALSE(preview_request("/preview/roof%2.png"));
  CHECK_FALSE(preview_request("/preview/roof%.png"));
}

TEST_CASE("status page: html_escape", "[status]") {
  CHECK(html_escape("a<b>&\"c'") == "a&lt;b&gt;&amp;&quot;c&#39;");
  CHECK(html_escape("plain") == "plain");
}
