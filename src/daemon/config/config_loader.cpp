// SPDX-License-Identifier: LGPL-2.1-or-later
// The shape of starsiftd's config: the global keys and the list of pipelines. Sources are read
// by source_section.cpp, chains by chain_section.cpp; each value on its own by ConfigReader,
// which records a refusal and lets reading go on.
#include "daemon/config/config_loader.hpp"

#include <map>
#include <optional>
#include <span>
#include <variant>

#include "daemon/config/chain_section.hpp"
#include "daemon/config/clips_section.hpp"
#include "daemon/config/config_file.hpp"
#include "daemon/config/config_names.hpp"
#include "daemon/config/config_reader.hpp"
#include "daemon/config/mqtt_section.hpp"
#include "daemon/config/rtsp_section.hpp"
#include "daemon/config/source_section.hpp"
#include "daemon/config/view_outputs_section.hpp"
#include "pipeline/engine/streaming_chain.hpp"
#include "pipeline/param_checks.hpp"

namespace starsift::daemon {

namespace {

constexpr std::string_view kTopKeys[] = {"state-directory",    "log",       "metrics", "disk",
                                         "shutdown-timeout-s", "pipelines", "mqtt",    "rtsp"};
constexpr std::string_view kLogKeys[] = {"level"};
constexpr std::string_view kMetricsKeys[] = {"address", "port"};
constexpr std::string_view kDiskKeys[] = {"min-free", "keep-nights"};

constexpr std::string_view kPipelineKeys[] = {"name",    "source", "chain",           "backend",
                                              "device",  "depth",  "stall-timeout-s", "restart",
                                              "tracker", "outputs"};
constexpr std::string_view kRestartKeys[] = {"initial-s", "max-s"};
constexpr std::string_view kTrackerKeys[] = {"gate",      "confirm",   "coast",
                                             "min-speed", "max-speed", "merge-streaks"};
constexpr std::string_view kOutputsKeys[] = {"detections", "fits", "video", "preview", "mqtt",
                                             "rtsp",       "rtp",  "shm",   "clips"};
constexpr std::string_view kMqttOutputKeys[] = {"enabled"};
constexpr std::string_view kDetectionsKeys[] = {"enabled"};
constexpr std::string_view kFitsKeys[] = {"every-s", "on-detection", "max-per-hour"};
constexpr std::string_view kVideoKeys[] = {"enabled", "segment-s", "encoder", "bitrate-kbps"};
constexpr std::string_view kPreviewKeys[] = {"every-s"};

constexpr int kMaxDevice = 1023;
constexpr double kMaxShutdownTimeoutS = 600.0;
constexpr double kMaxStallTimeoutS = 3600.0;
constexpr double kMaxRestartS = 3600.0;
constexpr double kDay = 86400.0;
constexpr int kMaxFitsPerHour = 100000;

std::string keys_text(std::span<const std::string_view> keys) {
  return join_names(std::vector<std::string_view>(keys.begin(), keys.end()));
}

// [a-z0-9][a-z0-9_-]{0,31}: safe in a directory name, a metrics label and a log field.
bool is_pipeline_name(std::string_view name) {
  const auto lower_or_digit = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  };
  if (name.empty() || name.size() > static_cast<std::size_t>(kMaxPipelineNameLength)) return false;
  if (!lower_or_digit(name.front())) return false;
  for (char c : name) {
    if (!lower_or_digit(c) && c != '_' && c != '-') return false;
  }
  return true;
}

std::string name_allowed() {
  return "1 to " + std::to_string(kMaxPipelineNameLength) +
         " characters a-z, 0-9, '_' and '-', the first a letter or digit (it names the "
         "pipeline's directories, metrics labels and log fields)";
}

class DaemonReader {
 public:
  DaemonReader(std::string_view text, std::string_view origin,
               const std::filesystem::path& base_directory)
      : text_(text), reader_(std::string(origin)), base_directory_(base_directory) {}

  DaemonConfig read() {
    DaemonConfig config;
    const SourceLocation start{reader_.origin(), 1, 1};
    std::vector<YAML::Node> documents;
    try {
      documents = YAML::LoadAll(std::string(text_));
    } catch (const YAML::Exception& e) {
      reader_.refuse(reader_.source().at(e.mark), "", "YAML syntax error: " + e.msg,
                     "well-formed YAML");
      throw ConfigErrors(reader_.problems().in_file_order());
    }
    const std::string allowed_top =
        "a map with the keys " + keys_text(kTopKeys) + " ('pipelines' is required)";
    if (documents.empty() || documents.front().IsNull()) {
      reader_.refuse(start, "", "the config is empty", allowed_top);
      throw ConfigErrors(reader_.problems().in_file_order());
    }
    if (documents.size() > 1) {
      reader_.refuse(
          reader_.source().at(documents[1], start), "",
          "a second YAML document (after '---'); found " + std::to_string(documents.size()),
          "one document holding the whole config");
    }
    const Value top = reader_.value(documents.front(), start, "");
    MapReader map(reader_, top, kTopKeys, "the config");
    if (map.is_map()) {
      read_global(map, config);
      if (const auto pipelines = map.require(
              "pipelines", "a sequence of pipelines, each a map with name, source and chain")) {
        read_pipelines(*pipelines, config);
      }
      check_mqtt_outputs();
      resolve_rtsp_outputs(config);
    }
    if (!reader_.problems().empty()) throw ConfigErrors(reader_.problems().in_file_order());
    return config;
  }

 private:
  void read_global(MapReader& map, DaemonConfig& config) {
    if (const auto v = map.find("state-directory")) {
      if (const auto text = reader_.text(*v, "a directory path")) {
        config.state_directory = resolve_path(base_directory_, *text);
      }
    }
    if (const auto v = map.find("log")) {
      MapReader log(reader_, *v, kLogKeys, "the log settings");
      log.read("level", config.log.level, log_level_names());
    }
    if (const auto v = map.find("metrics")) read_metrics(*v, config.metrics);
    if (const auto v = map.find("disk")) {
      MapReader disk(reader_, *v, kDiskKeys, "the disk settings");
      if (const auto min_free = disk.find("min-free")) {
        if (const auto bytes = reader_.size(*min_free)) config.disk.min_free_bytes = *bytes;
      }
      disk.read("keep-nights", config.disk.keep_nights, 0, DiskConfig::kMaxKeepNights,
                "0 (no limit) or 1.." + std::to_string(DiskConfig::kMaxKeepNights));
    }
    map.read("shutdown-timeout-s", config.shutdown_timeout_s, 0.0, true, kMaxShutdownTimeoutS, "s");
    if (const auto v = map.find("mqtt")) {
      mqtt_given_ = true;
      config.mqtt = read_mqtt(reader_, *v, base_directory_);
    }
    if (const auto v = map.find("rtsp")) {
      rtsp_given_ = true;
      config.rtsp = read_rtsp(reader_, *v);
    }
  }

  // A pipeline that asks to publish (`outputs.mqtt.enabled: true` written out) needs a broker.
  // Left out, the switch is on and means nothing without one.
  void check_mqtt_outputs() {
    if (mqtt_given_) return;  // a refused section has its own problems
    for (const Value& at : mqtt_enabled_at_) {
      reader_.refuse(at, "true, but the config has no mqtt section naming a broker",
                     "a top-level 'mqtt: {host: ...}' (docs/publishing.md), or enabled: false");
    }
  }

  // Without a top-level `rtsp`, a pipeline that names views is refused; with one, a pipeline
  // that names none serves every view.
  void resolve_rtsp_outputs(DaemonConfig& config) {
    for (std::size_t i = 0; i < config.pipelines.size(); ++i) {
      RtspOutput& rtsp = config.pipelines[i].outputs.rtsp;
      const std::optional<Value>& given = rtsp_streams_at_[i];
      if (!rtsp_given_) {
        if (given && !rtsp.streams.empty()) {
          reader_.refuse(*given, "views to serve, but the config has no rtsp section",
                         "a top-level 'rtsp:' (docs/publishing.md), or streams: []");
        }
        rtsp.streams.clear();
      } else if (!given) {
        rtsp.streams = {StreamView::Raw, StreamView::Whitened, StreamView::Detections};
      }
    }
  }

  void read_metrics(const Value& value, MetricsConfig& metrics) {
    MapReader map(reader_, value, kMetricsKeys, "the metrics settings");
    read_listen_address(reader_, map, metrics.address);
    map.read("port", metrics.port, 0, 65535, "0 (no metrics endpoint) or 1..65535");
  }

  void read_pipelines(const Value& pipelines, DaemonConfig& config) {
    const std::string allowed = "a sequence of 1 to " + std::to_string(kMaxPipelines) +
                                " pipelines, each a map with name, source and chain";
    const YAML::Node& node = pipelines.node;
    if (node.IsNull() || (node.IsSequence() && node.size() == 0)) {
      reader_.refuse(pipelines, "a config needs at least one pipeline", allowed);
      return;
    }
    if (!node.IsSequence()) {
      reader_.refuse(pipelines,
                     "expected a sequence of pipelines, got " + describe_yaml_value(node), allowed);
      return;
    }
    // Before any is read: a few bytes of aliases could ask for many.
    if (node.size() > static_cast<std::size_t>(kMaxPipelines)) {
      reader_.refuse(pipelines,
                     std::to_string(node.size()) + " pipelines, more than the limit of " +
                         std::to_string(kMaxPipelines),
                     allowed);
      return;
    }
    // name -> its pipeline, as messages name it: "pipelines[0] (line 12)"
    std::map<std::string, std::string> named;
    for (std::size_t i = 0; i < node.size(); ++i) {
      const Value item = reader_.value(node[i], pipelines.where, pipelines.item(i));
      rtsp_streams_.reset();
      if (auto pipeline = read_pipeline(item, named)) {
        config.pipelines.push_back(std::move(*pipeline));
        rtsp_streams_at_.push_back(rtsp_streams_);
      }
    }
  }

  std::optional<PipelineConfig> read_pipeline(const Value& item,
                                              std::map<std::string, std::string>& named) {
    MapReader map(reader_, item, kPipelineKeys, "a pipeline");
    if (!map.is_map()) return std::nullopt;
    PipelineConfig pipeline;
    bool complete = true;
    if (const auto v = map.require("name", name_allowed())) {
      const auto name = reader_.text(*v, name_allowed());
      if (!name) {
        complete = false;
      } else if (!is_pipeline_name(*name)) {
        reader_.refuse(*v, quote_value(*name) + " is not allowed", name_allowed());
        complete = false;
      } else if (const auto other = named.find(*name); other != named.end()) {
        reader_.refuse(*v, quote_value(*name) + " is already the name of " + other->second,
                       "a name of its own for each pipeline");
        complete = false;
      } else {
        named.emplace(*name, item.key + " (line " + std::to_string(v->where.line) + ")");
        pipeline.name = *name;
      }
    } else {
      complete = false;
    }
    std::optional<Value> source_value;  // set when the source was read without a problem
    if (const auto v =
            map.require("source", "one key naming the kind: " + keys_text(source_kinds()))) {
      if (auto source = read_source(reader_, *v, base_directory_)) {
        pipeline.source = std::move(*source);
        source_value = v;
      } else {
        complete = false;
      }
    } else {
      complete = false;
    }
    if (const auto v = map.require("chain",
                                   "a sequence of stages (siftchain's schema), or the "
                                   "path of a chain file")) {
      if (auto chain = read_pipeline_chain(reader_, text_, *v, base_directory_)) {
        pipeline.chain = std::move(*chain);
        refuse_chain_tracking(pipeline.chain, *v);
      } else {
        complete = false;
      }
    } else {
      complete = false;
    }
    map.read("backend", pipeline.backend, backend_names());
    map.read("device", pipeline.device, 0, kMaxDevice);
    map.read("depth", pipeline.depth, 1, kMaxStreamingDepth);
    bool stall_timeout_read = true;
    if (const auto v = map.find("stall-timeout-s")) {
      const auto seconds = reader_.number(*v, 0.0, true, kMaxStallTimeoutS, "s");
      if (seconds) pipeline.stall_timeout_s = *seconds;
      stall_timeout_read = seconds.has_value();
    }
    if (const auto v = map.find("restart")) read_restart(*v, pipeline.restart);
    if (const auto v = map.find("tracker")) read_tracker(*v, pipeline.tracker);
    if (const auto v = map.find("outputs")) read_outputs(*v, pipeline.outputs);
    if (source_value && stall_timeout_read) check_stall_timeout(map, *source_value, pipeline);
    if (!complete) return std::nullopt;
    return pipeline;
  }

  void read_restart(const Value& value, RestartConfig& restart) {
    MapReader map(reader_, value, kRestartKeys, "the restart settings");
    map.read("initial-s", restart.initial_s, 0.0, true, kMaxRestartS, "s");
    map.read("max-s", restart.max_s, 0.0, true, kMaxRestartS, "s");
    if (restart.initial_s > restart.max_s) {
      const auto max = map.find("max-s");
      const Value& at = max ? *max : value;
      reader_.refuse(at.where, value.child("max-s"),
                     number_text(restart.max_s) + " s is less than initial-s " +
                         number_text(restart.initial_s) + " s",
                     "max-s >= initial-s");
    }
  }

  // A pipeline's tracking is set in its `tracker` section, which the daemon hands to
  // siftdetect: the same keys in the chain's detect stage would be a second place for them.
  void refuse_chain_tracking(const PipelineChain& chain, const Value& chain_value) {
    for (std::size_t i = 0; i < chain.config.stages.size(); ++i) {
      const StageConfig& stage = chain.config.stages[i];
      const auto* detect = std::get_if<DetectParams>(&stage.params);
      if (detect == nullptr || detect->link == DetectLinkParams{}) continue;
      reader_.refuse(stage.where, chain_value.item(i) + ".detect",
                     "sets merge-streaks or the tracker (gate, confirm, coast, min-speed, "
                     "max-speed), which starsiftd takes from the pipeline's tracker section",
                     "those keys under the pipeline's `tracker:`");
    }
  }

  // The ranges of siftdetect's properties of the same names.
  void read_tracker(const Value& value, TrackerConfig& tracker) {
    using T = TrackerParams;
    MapReader map(reader_, value, kTrackerKeys, "the tracker settings");
    map.read("gate", tracker.params.gate, 0.0, true, T::kMaxGate, "px");
    map.read("confirm", tracker.params.confirm, 1, T::kMaxConfirm);
    map.read("coast", tracker.params.coast, 0, T::kMaxCoast);
    map.read("min-speed", tracker.params.min_speed, 0.0, false, T::kMaxMaxSpeed, "px/frame");
    map.read("max-speed", tracker.params.max_speed, 0.0, true, T::kMaxMaxSpeed, "px/frame");
    map.read("merge-streaks", tracker.merge_streaks);
  }

  void read_outputs(const Value& value, OutputsConfig& outputs) {
    MapReader map(reader_, value, kOutputsKeys, "the outputs");
    if (const auto v = map.find("detections")) {
      MapReader detections(reader_, *v, kDetectionsKeys, "the detections output");
      detections.read("enabled", outputs.detections.enabled);
    }
    if (const auto v = map.find("fits")) {
      MapReader fits(reader_, *v, kFitsKeys, "the FITS output");
      fits.read("every-s", outputs.fits.every_s, 0.0, false, kDay, "s (0: none on a schedule)");
      fits.read("on-detection", outputs.fits.on_detection);
      fits.read("max-per-hour", outputs.fits.max_per_hour, 0, kMaxFitsPerHour,
                "0 (no limit) or 1.." + std::to_string(kMaxFitsPerHour));
    }
    if (const auto v = map.find("video")) {
      MapReader video(reader_, *v, kVideoKeys, "the video output");
      video.read("enabled", outputs.video.enabled);
      video.read("segment-s", outputs.video.segment_s, 0.0, true, kDay, "s");
      video.read("encoder", outputs.video.encoder, video_encoder_names());
      video.read("bitrate-kbps", outputs.video.bitrate_kbps, kMinBitrateKbps, kMaxBitrateKbps);
    }
    if (const auto v = map.find("preview")) {
      MapReader preview(reader_, *v, kPreviewKeys, "the preview output");
      preview.read("every-s", outputs.preview.every_s, 0.0, false, kDay, "s (0: no preview)");
    }
    if (const auto v = map.find("clips")) read_clips(reader_, *v, outputs.clips);
    if (const auto v = map.find("rtsp")) {
      rtsp_streams_ = read_rtsp_output(reader_, *v, outputs.rtsp);
    }
    if (const auto v = map.find("rtp")) outputs.rtp = read_rtp_output(reader_, *v);
    if (const auto v = map.find("shm")) {
      outputs.shm = read_shm_output(reader_, *v, base_directory_);
    }
    if (const auto v = map.find("mqtt")) {
      MapReader mqtt(reader_, *v, kMqttOutputKeys, "the MQTT output");
      mqtt.read("enabled", outputs.mqtt.enabled);
      if (const auto enabled = mqtt.find("enabled"); enabled && outputs.mqtt.enabled) {
        mqtt_enabled_at_.push_back(*enabled);
      }
    }
  }

  // A source whose frames come further apart than the stall timeout would be restarted
  // between any two of them.
  void check_stall_timeout(const MapReader& map, const Value& source,
                           const PipelineConfig& pipeline) {
    const auto interval = frame_interval_s(pipeline.source);
    if (!interval || *interval < pipeline.stall_timeout_s) return;
    const auto stall = map.find("stall-timeout-s");
    const Value& at = stall ? *stall : source;
    reader_.refuse(at.where, map.self().child("stall-timeout-s"),
                   number_text(pipeline.stall_timeout_s) +
                       " s is not longer than the source's frame interval (" +
                       number_text(*interval) + " s): every frame would count as a stall",
                   "more than " + number_text(*interval) + " s");
  }

  std::string_view text_;
  ConfigReader reader_;
  std::filesystem::path base_directory_;
  bool mqtt_given_ = false;             // the file has a top-level `mqtt`
  std::vector<Value> mqtt_enabled_at_;  // each `outputs.mqtt.enabled: true` written out
  bool rtsp_given_ = false;             // the file has a top-level `rtsp`
  // Each pipeline's `outputs.rtsp.streams` when written out: of the one being read, and of
  // each read (in the order of config.pipelines).
  std::optional<Value> rtsp_streams_;
  std::vector<std::optional<Value>> rtsp_streams_at_;
};

}  // namespace

DaemonConfig parse_daemon_config(std::string_view text, std::string_view origin,
                                 const std::filesystem::path& base_directory) {
  return DaemonReader(text, origin, base_directory).read();
}

DaemonConfig load_daemon_config(const std::filesystem::path& path) {
  const std::string text = read_config_file(path, kMaxConfigFileBytes);
  std::error_code error;
  std::filesystem::path absolute = std::filesystem::absolute(path, error);
  if (error) absolute = path;
  return parse_daemon_config(text, path.string(), absolute.parent_path());
}

}  // namespace starsift::daemon
