// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/runtime/metrics.hpp"

#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

#include <functional>
#include <sstream>

namespace starsift::daemon {

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

MetricFamily per_pipeline(const DaemonSnapshot& s, std::string name, std::string help,
                          MetricType type,
                          const std::function<double(const PipelineSnapshot&)>& value) {
  MetricFamily family{std::move(name), std::move(help), type, {}};
  for (const PipelineSnapshot& p : s.pipelines) {
    ClientMetric m;
    m.label.push_back({"pipeline", p.name});
    const double v = value(p);
    if (type == MetricType::Counter) {
      m.counter.value = v;
    } else {
      m.gauge.value = v;
    }
    family.metric.push_back(std::move(m));
  }
  return family;
}

// Like per_pipeline(), for the pipelines that publish to MQTT only.
MetricFamily per_publisher(const DaemonSnapshot& s, std::string name, std::string help,
                           MetricType type, double (*value)(const PipelineSnapshot&)) {
  MetricFamily family = per_pipeline(s, std::move(name), std::move(help), type, value);
  std::erase_if(family.metric, [&](const ClientMetric& m) {
    for (const PipelineSnapshot& p : s.pipelines) {
      if (p.name == m.label.front().value) return !p.mqtt;
    }
    return true;
  });
  return family;
}

MetricFamily single(std::string name, std::string help, MetricType type, double value) {
  ClientMetric m;
  if (type == MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  return MetricFamily{std::move(name), std::move(help), type, {m}};
}

}  // namespace

std::string metrics_text(const DaemonSnapshot& s) {
  using P = PipelineSnapshot;
  const auto C = MetricType::Counter;
  const auto G = MetricType::Gauge;
  std::vector<MetricFamily> f;
  const auto counter = [&](const char* name, const char* help, std::uint64_t P::*field) {
    f.push_back(per_pipeline(s, name, help, C,
                             [field](const P& p) { return static_cast<double>(p.*field); }));
  };
  counter("starsift_frames_in_total", "Frames the source gave", &P::frames_in);
  counter("starsift_frames_out_total", "Frames through the chain", &P::frames_out);
  counter("starsift_frames_dropped_total", "Frames missing from the source: gaps in its timestamps",
          &P::dropped);
  counter("starsift_frames_overrun_total",
          "Frames dropped before the chain because it could not keep up", &P::overrun);
  counter("starsift_detections_total", "Objects detected, all frames", &P::detections);
  counter("starsift_mover_reports_total", "Movers reported, summed over frames", &P::mover_reports);
  counter("starsift_restarts_total", "Pipeline restarts after a fault", &P::restarts);
  counter("starsift_rebuilds_total", "Pipelines rebuilt by a reload", &P::rebuilds);
  counter("starsift_live_updates_total", "Pipelines changed in place by a reload",
          &P::live_updates);
  counter("starsift_backend_fallbacks_total", "backend auto fell back to the CPU after a GPU fault",
          &P::backend_fallbacks);
  counter("starsift_json_lines_total", "Detection lines written", &P::json_lines);
  counter("starsift_json_failures_total", "Detection lines lost (disk, full queue)",
          &P::json_failures);
  counter("starsift_fits_files_total", "FITS frames written", &P::fits_files);
  counter("starsift_fits_failures_total", "FITS frames lost (disk, full queue)", &P::fits_failures);
  counter("starsift_video_segments_total", "Recording segments opened", &P::video_segments);
  counter("starsift_clip_events_total", "Events seen by event clips (tracks confirmed, bright)",
          &P::clip_events);
  counter("starsift_clips_total", "Event clips written (video and JSON)", &P::clips);
  counter("starsift_clips_limited_total", "Events not clipped: max-per-hour reached",
          &P::clips_limited);
  counter("starsift_clip_failures_total", "Event clips not written (disk, muxer, encoder)",
          &P::clip_failures);
  f.push_back(per_pipeline(s, "starsift_fps", "Frame rate measured from the source's timestamps", G,
                           [](const P& p) { return p.fps; }));
  f.push_back(per_pipeline(s, "starsift_latency_seconds",
                           "Capture to detection of the latest frame", G,
                           [](const P& p) { return p.latency_s; }));
  f.push_back(per_pipeline(s, "starsift_tracks", "Movers reported in the latest frame", G,
                           [](const P& p) { return static_cast<double>(p.movers); }));
  f.push_back(per_pipeline(s, "starsift_objects", "Objects detected in the latest frame", G,
                           [](const P& p) { return static_cast<double>(p.objects); }));
  f.push_back(per_pipeline(s, "starsift_pipeline_up", "1 while frames flow through the pipeline", G,
                           [](const P& p) { return p.flowing ? 1.0 : 0.0; }));
  counter("starsift_chain_zero_copy_total", "Frames the chain took in without a copy",
          &P::zero_copy);
  counter("starsift_chain_copied_total", "Frames the chain copied once on the way in", &P::copied);
  f.push_back(per_pipeline(s, "starsift_chain_upload_seconds",
                           "The latest frame's copy to the GPU (0 on the CPU)", G,
                           [](const P& p) { return p.upload_s; }));
  f.push_back(per_pipeline(s, "starsift_chain_download_seconds",
                           "The latest frame's copy from the GPU (0 on the CPU)", G,
                           [](const P& p) { return p.download_s; }));
  f.push_back(per_publisher(s, "starsift_mqtt_published_total",
                            "Detections lines the MQTT broker confirmed", C,
                            [](const P& p) { return static_cast<double>(p.mqtt_published); }));
  f.push_back(per_publisher(s, "starsift_mqtt_dropped_total",
                            "Detections lines pushed out of the full MQTT queue, oldest first", C,
                            [](const P& p) { return static_cast<double>(p.mqtt_dropped); }));
  f.push_back(per_publisher(s, "starsift_mqtt_failed_total",
                            "Detections lines refused by libmosquitto or unsent at a stop", C,
                            [](const P& p) { return static_cast<double>(p.mqtt_failed); }));
  f.push_back(per_publisher(s, "starsift_mqtt_queued",
                            "Detections lines waiting for the MQTT broker now", G,
                            [](const P& p) { return static_cast<double>(p.mqtt_queued); }));
  f.push_back(per_publisher(s, "starsift_mqtt_connected", "1 while connected to the MQTT broker", G,
                            [](const P& p) { return p.mqtt_connected ? 1.0 : 0.0; }));
  f.push_back(per_publisher(s, "starsift_mqtt_connections_total",
                            "Connections the MQTT broker accepted (reconnects included)", C,
                            [](const P& p) { return static_cast<double>(p.mqtt_connections); }));
  MetricFamily stages{"starsift_stage_seconds",
                      "Each stage's time on the latest frame (siftchain's stages)",
                      G,
                      {}};
  for (const P& p : s.pipelines) {
    for (const auto& [stage, seconds] : p.stage_s) {
      ClientMetric m;
      m.label = {{"pipeline", p.name}, {"stage", stage}};
      m.gauge.value = seconds;
      stages.metric.push_back(std::move(m));
    }
  }
  f.push_back(std::move(stages));
  const auto per_view = [&](const char* name, const char* help, MetricType type,
                            double (*value)(const ViewSnapshot&)) {
    MetricFamily family{name, help, type, {}};
    for (const P& p : s.pipelines) {
      for (const ViewSnapshot& v : p.views) {
        ClientMetric m;
        m.label = {{"pipeline", p.name}, {"view", v.view}};
        (type == C ? m.counter.value : m.gauge.value) = value(v);
        family.metric.push_back(std::move(m));
      }
    }
    f.push_back(std::move(family));
  };
  per_view("starsift_view_frames_total", "Live view frames handed to the encoder", C,
           [](const ViewSnapshot& v) { return static_cast<double>(v.frames); });
  per_view("starsift_view_dropped_total", "Live view frames dropped because the encoder was behind",
           C, [](const ViewSnapshot& v) { return static_cast<double>(v.dropped); });
  per_view("starsift_view_watched", "1 while an RTSP client watches the view", G,
           [](const ViewSnapshot& v) { return v.watched ? 1.0 : 0.0; });
  const auto per_sender = [&](const char* name, const char* help,
                              std::uint64_t SenderSnapshot::*value) {
    MetricFamily family{name, help, C, {}};
    for (const P& p : s.pipelines) {
      for (const SenderSnapshot& v : p.senders) {
        ClientMetric m;
        m.label = {{"pipeline", p.name}, {"output", v.output}, {"view", v.view}};
        m.counter.value = static_cast<double>(v.*value);
        family.metric.push_back(std::move(m));
      }
    }
    f.push_back(std::move(family));
  };
  per_sender("starsift_view_sender_frames_total", "Live view frames sent over RTP or shared memory",
             &SenderSnapshot::frames);
  per_sender("starsift_view_sender_errors_total",
             "Errors of the senders of a live view over RTP or shared memory",
             &SenderSnapshot::errors);
  if (s.rtsp) {
    f.push_back(single("starsift_rtsp_clients", "RTSP clients connected now", G,
                       static_cast<double>(s.rtsp_clients)));
    f.push_back(single("starsift_rtsp_connections_total", "RTSP client connections since the start",
                       C, static_cast<double>(s.rtsp_connections)));
  }
  f.push_back(single("starsift_clock_synchronised",
                     "The kernel says the host clock is synchronised (1) or not (0)", G,
                     s.clock.synchronised ? 1.0 : 0.0));
  f.push_back(single("starsift_clock_error_seconds",
                     "The host clock's estimated error as its time service last set it (-1: "
                     "unknown)",
                     G, s.clock.est_error_us < 0 ? -1.0 : s.clock.est_error_us * 1e-6));
  f.push_back(single("starsift_clock_max_error_seconds",
                     "The host clock's maximum error (-1: "
                     "unknown)",
                     G, s.clock.max_error_us < 0 ? -1.0 : s.clock.max_error_us * 1e-6));
  f.push_back(
      single("starsift_reloads_total", "Reloads applied", C, static_cast<double>(s.reloads)));
  f.push_back(single("starsift_reload_failures_total", "Reloads refused (invalid config)", C,
                     static_cast<double>(s.reload_failures)));
  f.push_back(single("starsift_uptime_seconds", "Seconds since starsiftd started", G, s.uptime_s));
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, f);
  return out.str();
}

bool healthy(const DaemonSnapshot& s, std::string* body) {
  bool ok = !s.pipelines.empty();
  std::string text;
  for (const PipelineSnapshot& p : s.pipelines) {
    const bool done = p.state == "stopped" && !s.stopping;
    const bool good = p.flowing || s.stopping || (done && p.fault.empty());
    ok = ok && good;
    text += p.name + ": " + p.state;
    if (!p.backend.empty()) text += " (" + p.backend + ")";
    if (!p.fault.empty()) text += "; " + p.fault;
    text += "\n";
  }
  if (body != nullptr) *body = (ok ? "ok\n" : "unhealthy\n") + text;
  return ok;
}

}  // namespace starsift::daemon
