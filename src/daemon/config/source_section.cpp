// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/config/source_section.hpp"

#include <algorithm>
#include <climits>
#include <iterator>
#include <limits>
#include <type_traits>
#include <utility>

#include "daemon/config/config_names.hpp"

namespace starsift::daemon {

namespace {

constexpr std::string_view kKinds[] = {"sky", "file", "v4l2", "rtsp", "aravis", "gst"};

// ---- sky: siftskysrc's properties, SkyParams' rules --------------------------------------

constexpr std::string_view kSkyKeys[] = {"width",
                                         "height",
                                         "seed",
                                         "format",
                                         "fps",
                                         "live",
                                         "star-density",
                                         "star-flux-min",
                                         "star-flux-max",
                                         "star-flux-slope",
                                         "psf",
                                         "fwhm",
                                         "moffat-beta",
                                         "sky-level",
                                         "sky-gradient",
                                         "sky-gradient-angle",
                                         "read-noise",
                                         "gain",
                                         "bias",
                                         "bit-depth",
                                         "hot-pixel-fraction",
                                         "hot-pixel-level",
                                         "jitter",
                                         "jitter-reversion",
                                         "drift-x",
                                         "drift-y",
                                         "movers",
                                         "mover-snr-min",
                                         "mover-snr-max",
                                         "mover-speed-min",
                                         "mover-speed-max",
                                         "mover-direction"};

// The SkyParams fields written as numbers, by their siftskysrc property names.
struct SkyNumber {
  std::string_view key;
  double SkyParams::*field;
};
constexpr SkyNumber kSkyNumbers[] = {
    {"star-density", &SkyParams::star_density},
    {"star-flux-min", &SkyParams::star_flux_min},
    {"star-flux-max", &SkyParams::star_flux_max},
    {"star-flux-slope", &SkyParams::star_flux_slope},
    {"fwhm", &SkyParams::fwhm},
    {"moffat-beta", &SkyParams::moffat_beta},
    {"sky-level", &SkyParams::sky_level},
    {"sky-gradient", &SkyParams::sky_gradient},
    {"sky-gradient-angle", &SkyParams::sky_gradient_angle},
    {"read-noise", &SkyParams::read_noise},
    {"gain", &SkyParams::gain},
    {"bias", &SkyParams::bias},
    {"hot-pixel-fraction", &SkyParams::hot_pixel_fraction},
    {"hot-pixel-level", &SkyParams::hot_pixel_level},
    {"jitter", &SkyParams::jitter},
    {"jitter-reversion", &SkyParams::jitter_reversion},
    {"drift-x", &SkyParams::drift_x},
    {"drift-y", &SkyParams::drift_y},
    {"mover-snr-min", &SkyParams::mover_snr_min},
    {"mover-snr-max", &SkyParams::mover_snr_max},
    {"mover-speed-min", &SkyParams::mover_speed_min},
    {"mover-speed-max", &SkyParams::mover_speed_max},
    {"mover-direction", &SkyParams::mover_direction},
};

struct SkyInteger {
  std::string_view key;
  int SkyParams::*field;
};
constexpr SkyInteger kSkyIntegers[] = {
    {"width", &SkyParams::width},
    {"height", &SkyParams::height},
    {"bit-depth", &SkyParams::bit_depth},
    {"movers", &SkyParams::movers},
};

// What SkyParams' own rule allows for `field`, in its words: the refusal of a value no rule
// allows (not a number, or the lowest integer).
template <class T>
std::string sky_allowed(T SkyParams::*field) {
  SkyParams probe;
  if constexpr (std::is_same_v<T, double>) {
    probe.*field = std::numeric_limits<double>::quiet_NaN();
  } else {
    probe.*field = std::numeric_limits<T>::min();
  }
  try {
    probe.validate_fields();
  } catch (const Error& e) {
    return e.allowed();
  }
  return {};
}

// `value` as the `field` of otherwise default SkyParams, judged by SkyParams' own rule for
// that field; a refusal is recorded at the value.
template <class T>
bool sky_field_allowed(ConfigReader& reader, const Value& value, T SkyParams::*field, const T& v) {
  SkyParams probe;
  probe.*field = v;
  try {
    probe.validate_fields();
    return true;
  } catch (const Error& e) {
    reader.refuse(value, shown_value(value.node.Scalar()) + " is not allowed", e.allowed());
    return false;
  }
}

SkySourceConfig read_sky(ConfigReader& reader, MapReader& map) {
  SkySourceConfig sky;
  SkyParams& params = sky.params;
  for (const SkyNumber& number : kSkyNumbers) {
    const auto v = map.find(number.key);
    if (!v) continue;
    const auto parsed = reader.any_number(*v, sky_allowed(number.field));
    if (parsed && sky_field_allowed(reader, *v, number.field, *parsed)) {
      params.*number.field = *parsed;
    }
  }
  for (const SkyInteger& integer : kSkyIntegers) {
    const auto v = map.find(integer.key);
    if (!v) continue;
    const auto parsed = reader.integer(*v, INT_MIN, INT_MAX, sky_allowed(integer.field));
    if (parsed && sky_field_allowed(reader, *v, integer.field, *parsed)) {
      params.*integer.field = *parsed;
    }
  }
  if (const auto v = map.find("seed")) {
    if (const auto seed = reader.unsigned64(*v)) params.seed = *seed;
  }
  map.read("psf", params.psf, psf_names());
  map.read("format", sky.format, sky_format_names());
  if (const auto v = map.find("fps")) {
    if (const auto fps = reader.frame_rate(*v, false)) sky.fps = *fps;
  }
  map.read("live", sky.live);
  return sky;
}

// ---- the other kinds ---------------------------------------------------------------------

constexpr std::string_view kFileKeys[] = {"path", "loop", "fps"};

FileSourceConfig read_file(ConfigReader& reader, MapReader& map,
                           const std::filesystem::path& base_directory) {
  FileSourceConfig file;
  if (const auto v = map.require("path",
                                 "a video file, an image sequence such as "
                                 "frames/frame_%06d.png, or FITS frames such as "
                                 "night/*.fits")) {
    if (const auto text = reader.text(*v, "a path"))
      file.path = resolve_path(base_directory, *text);
  }
  map.read("loop", file.loop);
  if (const auto v = map.find("fps")) {
    if (const auto fps = reader.frame_rate(*v, true)) file.fps = *fps;
  }
  return file;
}

constexpr std::string_view kV4l2Keys[] = {"device", "width", "height", "fps", "format"};

V4l2SourceConfig read_v4l2(ConfigReader& reader, MapReader& map) {
  V4l2SourceConfig v4l2;
  if (const auto v = map.find("device")) {
    const std::string allowed = "an absolute path such as /dev/video0 or /dev/v4l/by-id/...";
    if (const auto text = reader.text(*v, allowed)) {
      if (text->starts_with('/')) {
        v4l2.device = *text;
      } else {
        reader.refuse(*v, quote_value(*text) + " is not an absolute path", allowed);
      }
    }
  }
  map.read("width", v4l2.width, 0, SkyParams::kMaxSide, "0 (the camera's) or 1..65536");
  map.read("height", v4l2.height, 0, SkyParams::kMaxSide, "0 (the camera's) or 1..65536");
  if (const auto v = map.find("fps")) {
    if (const auto fps = reader.frame_rate(*v, true)) v4l2.fps = *fps;
  }
  if (const auto v = map.find("format")) {
    if (const auto format = reader.word(*v, kV4l2Formats)) v4l2.format = *format;
  }
  return v4l2;
}

constexpr std::string_view kRtspKeys[] = {"url", "latency-ms", "timeout-s", "transport"};
constexpr std::string_view kRtspSchemes[] = {"rtsp://", "rtsps://", "rtspt://", "rtspu://",
                                             "rtsph://"};

RtspSourceConfig read_rtsp(ConfigReader& reader, MapReader& map) {
  RtspSourceConfig rtsp;
  const std::string allowed =
      "a URL rtsp://[user:password@]host[:port]/path (also rtsps, rtspt, rtspu, rtsph)";
  if (const auto v = map.require("url", allowed)) {
    if (const auto url = reader.text(*v, allowed)) {
      const bool known = std::any_of(
          std::begin(kRtspSchemes), std::end(kRtspSchemes), [&](std::string_view scheme) {
            return url->starts_with(scheme) && url->size() > scheme.size();
          });
      if (known) {
        rtsp.url = *url;
      } else {
        reader.refuse(*v, quote_value(*url) + " is not an RTSP URL", allowed);
      }
    }
  }
  map.read("latency-ms", rtsp.latency_ms, 0, 10000);
  map.read("timeout-s", rtsp.timeout_s, 0.0, true, 600.0, "s");
  map.read("transport", rtsp.transport, rtsp_transport_names());
  return rtsp;
}

constexpr std::string_view kAravisKeys[] = {"camera", "exposure-us",  "gain-db",
                                            "fps",    "pixel-format", "packet-size"};
constexpr double kMaxExposureUs = 600.0e6;  // 10 minutes
constexpr double kMaxGainDb = 100.0;
constexpr int kMinPacketSize = 576;   // the smallest datagram every IPv4 host takes
constexpr int kMaxPacketSize = 9000;  // jumbo frames

AravisSourceConfig read_aravis(ConfigReader& reader, MapReader& map) {
  AravisSourceConfig aravis;
  if (const auto v = map.find("camera")) {
    if (const auto camera = reader.text(*v, "aravis's camera id, as arv-tool-0.8 lists it", true)) {
      aravis.camera = *camera;
    }
  }
  if (const auto v = map.find("exposure-us")) {
    aravis.exposure_us = reader.number(*v, 1.0, false, kMaxExposureUs, "us");
  }
  if (const auto v = map.find("gain-db")) {
    aravis.gain_db = reader.number(*v, 0.0, false, kMaxGainDb, "dB");
  }
  if (const auto v = map.find("fps")) {
    if (const auto fps = reader.frame_rate(*v, true)) aravis.fps = *fps;
  }
  if (const auto v = map.find("pixel-format")) {
    if (const auto format = reader.word(*v, kAravisPixelFormats)) aravis.pixel_format = *format;
  }
  if (const auto v = map.find("packet-size")) {
    const std::string allowed = "0 (negotiated with the camera) or " +
                                std::to_string(kMinPacketSize) + ".." +
                                std::to_string(kMaxPacketSize);
    if (const auto size = reader.integer(*v, 0, kMaxPacketSize, allowed)) {
      if (*size != 0 && *size < kMinPacketSize) {
        reader.refuse(*v, std::to_string(*size) + " is not allowed", allowed);
      } else {
        aravis.packet_size = *size;
      }
    }
  }
  return aravis;
}

constexpr std::string_view kGstKeys[] = {"launch"};

GstSourceConfig read_gst(ConfigReader& reader, MapReader& map) {
  GstSourceConfig gst;
  const std::string allowed =
      "a gst-launch description whose last element gives the frames, e.g. "
      "'videotestsrc ! videoconvert'";
  if (const auto v = map.require("launch", allowed)) {
    if (const auto launch = reader.text(*v, allowed)) gst.launch = *launch;
  }
  return gst;
}

std::span<const std::string_view> keys_of(std::string_view kind) {
  if (kind == "sky") return kSkyKeys;
  if (kind == "file") return kFileKeys;
  if (kind == "v4l2") return kV4l2Keys;
  if (kind == "rtsp") return kRtspKeys;
  if (kind == "aravis") return kAravisKeys;
  return kGstKeys;
}

std::string kinds_allowed() {
  std::vector<std::string_view> kinds(std::begin(kKinds), std::end(kKinds));
  return "one key naming the kind, holding its settings: " + join_names(kinds);
}

}  // namespace

std::span<const std::string_view> source_kinds() noexcept {
  return kKinds;
}

std::optional<SourceConfig> read_source(ConfigReader& reader, const Value& source,
                                        const std::filesystem::path& base_directory) {
  const YAML::Node& node = source.node;
  if (!node.IsMap() || node.size() == 0) {
    const std::string got = node.IsMap() ? "an empty map" : describe_yaml_value(node);
    std::string problem = "expected a source (a map with one key, the kind), got " + got;
    if (node.IsScalar() &&
        std::find(std::begin(kKinds), std::end(kKinds), node.Scalar()) != std::end(kKinds)) {
      problem +=
          " (for the defaults write '" + node.Scalar() + ":' or '{" + node.Scalar() + ": {}}')";
    }
    reader.refuse(source, problem, kinds_allowed());
    return std::nullopt;
  }
  // The kind: the one known key; every other key is a problem of its own.
  std::optional<std::pair<std::string, Value>> kind;
  bool refused = false;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const SourceLocation key_where = reader.source().at(it->first, source.where);
    const std::string name = it->first.IsScalar() ? it->first.Scalar() : std::string();
    if (std::find(std::begin(kKinds), std::end(kKinds), name) == std::end(kKinds)) {
      const std::string problem = it->first.IsScalar()
                                      ? unknown_name_problem("source kind", name, kKinds)
                                      : "unknown source kind " + describe_yaml_value(it->first);
      reader.refuse(key_where, source.key, problem, kinds_allowed());
      refused = true;
      continue;
    }
    if (kind) {
      reader.refuse(key_where, source.key,
                    "a second source kind, '" + name + "', after '" + kind->first + "' (line " +
                        std::to_string(kind->second.where.line) + ")",
                    "exactly one kind per source; a camera more is a pipeline more");
      refused = true;
      continue;
    }
    kind.emplace(name, reader.value(it->second, key_where, source.child(name)));
  }
  if (!kind) return std::nullopt;
  // The kind's settings are read even when the source is refused, for their own problems.
  const Value& settings = kind->second;
  MapReader map(reader, settings, keys_of(kind->first), "the " + kind->first + " settings");
  if (!map.is_map()) return std::nullopt;
  SourceConfig config;
  const std::string& name = kind->first;
  if (name == "sky") {
    config = read_sky(reader, map);
  } else if (name == "file") {
    config = read_file(reader, map, base_directory);
  } else if (name == "v4l2") {
    config = read_v4l2(reader, map);
  } else if (name == "rtsp") {
    config = read_rtsp(reader, map);
  } else if (name == "aravis") {
    config = read_aravis(reader, map);
  } else {
    config = read_gst(reader, map);
  }
  if (const auto* sky = std::get_if<SkySourceConfig>(&config)) {
    // The rules that join parameters (min <= max, the bias below saturation), on the whole.
    try {
      sky->params.validate_for(sky->format);
    } catch (const Error& e) {
      reader.refuse(settings, e.problem(), e.allowed());
    }
  }
  if (refused) return std::nullopt;
  return config;
}

std::optional<double> frame_interval_s(const SourceConfig& source) {
  const auto interval = [](const FrameRate& fps) -> std::optional<double> {
    if (!fps.is_set()) return std::nullopt;
    return 1.0 / fps.fps();
  };
  if (const auto* sky = std::get_if<SkySourceConfig>(&source)) return interval(sky->fps);
  if (const auto* file = std::get_if<FileSourceConfig>(&source)) return interval(file->fps);
  if (const auto* v4l2 = std::get_if<V4l2SourceConfig>(&source)) return interval(v4l2->fps);
  if (const auto* aravis = std::get_if<AravisSourceConfig>(&source)) {
    std::optional<double> longest = interval(aravis->fps);
    if (aravis->exposure_us) {
      const double exposure_s = *aravis->exposure_us * 1e-6;
      longest = std::max(longest.value_or(0.0), exposure_s);
    }
    return longest;
  }
  return std::nullopt;
}

}  // namespace starsift::daemon
