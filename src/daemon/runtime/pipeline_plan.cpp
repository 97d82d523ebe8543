// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/runtime/pipeline_plan.hpp"

#include <algorithm>
#include <cmath>
#include <variant>

#include "daemon/runtime/chain_text.hpp"
#include "pipeline/error.hpp"

namespace starsift::daemon {

namespace {

// A frame's caps are written as plain caps text; every field here is a plain word or number.
std::string gray_caps_format(PixelFormat format) {
  return format == PixelFormat::Gray8 ? "GRAY8" : "GRAY16_LE";
}

// siftskysrc's properties that differ from the sky's defaults (the caps carry width and
// height), so the log shows what was asked for.
void add_sky_properties(ElementSpec& e, const SkyParams& p) {
  const SkyParams d;
  const auto number = [&](const char* key, double value, double fallback) {
    if (value != fallback) e.set(key, number_text(value));
  };
  if (p.seed != d.seed) e.set("seed", std::to_string(p.seed));
  number("star-density", p.star_density, d.star_density);
  number("star-flux-min", p.star_flux_min, d.star_flux_min);
  number("star-flux-max", p.star_flux_max, d.star_flux_max);
  number("star-flux-slope", p.star_flux_slope, d.star_flux_slope);
  if (p.psf != d.psf) e.set("psf", std::string(to_string(p.psf)));
  number("fwhm", p.fwhm, d.fwhm);
  number("moffat-beta", p.moffat_beta, d.moffat_beta);
  number("sky-level", p.sky_level, d.sky_level);
  number("sky-gradient", p.sky_gradient, d.sky_gradient);
  number("sky-gradient-angle", p.sky_gradient_angle, d.sky_gradient_angle);
  number("read-noise", p.read_noise, d.read_noise);
  number("gain", p.gain, d.gain);
  number("bias", p.bias, d.bias);
  if (p.bit_depth != d.bit_depth) e.set("bit-depth", std::to_string(p.bit_depth));
  number("hot-pixel-fraction", p.hot_pixel_fraction, d.hot_pixel_fraction);
  number("hot-pixel-level", p.hot_pixel_level, d.hot_pixel_level);
  number("jitter", p.jitter, d.jitter);
  number("jitter-reversion", p.jitter_reversion, d.jitter_reversion);
  number("drift-x", p.drift_x, d.drift_x);
  number("drift-y", p.drift_y, d.drift_y);
  if (p.movers != d.movers) e.set("movers", std::to_string(p.movers));
  number("mover-snr-min", p.mover_snr_min, d.mover_snr_min);
  number("mover-snr-max", p.mover_snr_max, d.mover_snr_max);
  number("mover-speed-min", p.mover_speed_min, d.mover_speed_min);
  number("mover-speed-max", p.mover_speed_max, d.mover_speed_max);
  number("mover-direction", p.mover_direction, d.mover_direction);
}

std::vector<ElementSpec> sky_source(const SkySourceConfig& sky) {
  ElementSpec src{"siftskysrc", kSourceBinName, {}};
  src.name = "sky";
  add_sky_properties(src, sky.params);
  src.set("is-live", sky.live ? "true" : "false");
  std::string caps = "video/x-raw,format=" + gray_caps_format(sky.format) +
                     ",width=" + std::to_string(sky.params.width) +
                     ",height=" + std::to_string(sky.params.height) +
                     ",framerate=" + fraction_text(sky.fps);
  return {src, caps_spec(caps)};
}

bool ends_with(const std::string& text, const std::string& suffix) {
  if (text.size() < suffix.size()) return false;
  std::string tail = text.substr(text.size() - suffix.size());
  std::transform(tail.begin(), tail.end(), tail.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return tail == suffix;
}

bool is_fits_path(const std::string& path) {
  return ends_with(path, ".fits") || ends_with(path, ".fit") || ends_with(path, ".fts");
}

std::vector<ElementSpec> file_source(const FileSourceConfig& file, bool* loop_by_seek) {
  const std::string path = file.path.string();
  if (is_fits_path(path)) {
    if (path.find('%') != std::string::npos) {
      throw Error("source.file.path: FITS frames '" + path + "' named by a printf pattern",
                  "a FITS file, or a glob pattern naming several (night/*.fits)");
    }
    // FITS frames (a file or a glob pattern), stamped from DATE-OBS unless fps is set.
    ElementSpec src{"siftfitssrc", "file", {}};
    src.set("location", path);
    if (file.loop) src.set("loop", "true");
    if (file.fps.is_set()) src.set("fps", fraction_text(file.fps));
    return {src};
  }
  if (path.find('%') != std::string::npos) {
    // An image sequence: multifilesrc reads frame after frame by the printf pattern.
    if (!ends_with(path, ".png")) {
      throw Error("source.file.path: the image sequence '" + path + "' is not of PNG files",
                  "a PNG sequence (frames/frame_%06d.png), FITS files (night/*.fits) or a video "
                  "file GStreamer decodes");
    }
    ElementSpec src{"multifilesrc", "file", {}};
    src.set("location", path);
    src.set("index", "0");
    src.set("loop", file.loop ? "true" : "false");
    const FrameRate rate = file.fps.is_set() ? file.fps : FrameRate{25, 1};
    src.set("caps", "image/png,framerate=" + fraction_text(rate));
    return {src, ElementSpec{"pngdec", {}, {}}};
  }
  *loop_by_seek = file.loop;
  ElementSpec src{"filesrc", "file", {}};
  src.set("location", path);
  std::vector<ElementSpec> out{src, ElementSpec{"decodebin", {}, {}}};
  if (file.fps.is_set()) {
    out.push_back(ElementSpec{"videorate", {}, {}});
    out.push_back(caps_spec("video/x-raw,framerate=" + fraction_text(file.fps)));
  }
  return out;
}

std::vector<ElementSpec> v4l2_source(const V4l2SourceConfig& v) {
  ElementSpec src{"v4l2src", "camera", {}};
  src.set("device", v.device);
  const bool mjpg = v.format == "MJPG";
  std::string caps = mjpg ? "image/jpeg" : "video/x-raw";
  if (!mjpg && !v.format.empty()) caps += ",format=" + v.format;
  if (v.width > 0) caps += ",width=" + std::to_string(v.width);
  if (v.height > 0) caps += ",height=" + std::to_string(v.height);
  if (v.fps.is_set()) caps += ",framerate=" + fraction_text(v.fps);
  std::vector<ElementSpec> out{src, caps_spec(caps)};
  if (mjpg) out.push_back(ElementSpec{"jpegdec", {}, {}});
  return out;
}

std::string rtsp_protocols(RtspTransport transport) {
  switch (transport) {
    case RtspTransport::Tcp:
      return "tcp";
    case RtspTransport::Udp:
      return "udp+udp-mcast";
    case RtspTransport::Auto:
      break;
  }
  return "tcp+udp-mcast+udp";
}

std::vector<ElementSpec> rtsp_source(const RtspSourceConfig& r) {
  ElementSpec src{"rtspsrc", "camera", {}};
  src.set("location", r.url);
  src.set("latency", std::to_string(r.latency_ms));
  src.set("protocols", rtsp_protocols(r.transport));
  // Every wait of rtspsrc is bounded by timeout-s, TEARDOWN included: a dead camera must not
  // hold a restart or the shutdown (rtspsrc's TEARDOWN otherwise waits on the socket).
  const auto us = static_cast<unsigned long long>(std::llround(r.timeout_s * 1e6));
  src.set("timeout", std::to_string(us));
  src.set("tcp-timeout", std::to_string(us));
  src.set("teardown-timeout", std::to_string(us * 1000ULL));
  return {src, ElementSpec{"decodebin", {}, {}}};
}

// Mono8 is GRAY8; Mono10, Mono12 and Mono16 all reach GStreamer as GRAY16_LE, so the camera's
// PixelFormat feature is set by name and the chain told the real bit depth.
int aravis_bit_depth(const std::string& pixel_format) {
  if (pixel_format == "Mono8") return 8;
  if (pixel_format == "Mono10") return 10;
  if (pixel_format == "Mono12") return 12;
  if (pixel_format == "Mono16") return 16;
  return 0;
}

// siftcamsrc, not aravissrc: it writes frames straight into the pool downstream proposes,
// waits for a slow first frame instead of failing after 2 s, sets the pixel format and frame
// rate on the camera itself and reports a lost camera by name (docs/cameras.md).
std::vector<ElementSpec> aravis_source(const AravisSourceConfig& a) {
  ElementSpec src{"siftcamsrc", "camera", {}};
  if (!a.camera.empty()) src.set("camera", a.camera);
  if (a.exposure_us) src.set("exposure-us", number_text(*a.exposure_us));
  if (a.gain_db) src.set("gain-db", number_text(*a.gain_db));
  if (a.packet_size > 0) src.set("packet-size", std::to_string(a.packet_size));
  if (!a.pixel_format.empty()) src.set("pixel-format", a.pixel_format);
  if (a.fps.is_set()) src.set("fps", fraction_text(a.fps));
  return {src};
}

// The real bit depth of the frames, when the source says it and the caps cannot.
int source_bit_depth(const SourceConfig& source) {
  if (const auto* a = std::get_if<AravisSourceConfig>(&source)) {
    const int bits = aravis_bit_depth(a->pixel_format);
    return bits > 8 ? bits : 0;
  }
  return 0;
}

void add_engine_properties(ElementSpec& e, const PipelineConfig& config, int bit_depth) {
  e.set("backend", std::string(to_string(config.backend)));
  e.set("device-id", std::to_string(config.device));
  e.set("depth", std::to_string(config.depth));
  if (bit_depth > 0) e.set("bit-depth", std::to_string(bit_depth));
}

std::vector<ElementSpec> video_branch(const PipelineConfig& config, const PlanOptions& options) {
  const VideoOutput& video = config.outputs.video;
  ElementSpec queue{"queue", "video-queue", {}};
  queue.set("leaky", "downstream").set("max-size-buffers", "8");
  queue.set("max-size-bytes", "0").set("max-size-time", "0");
  // A key frame at least every 2 s, so each segment starts close to its nominal time.
  ElementSpec encoder = h264_encoder(video.encoder, video.bitrate_kbps,
                                     key_frame_interval(nominal_fps(config.source), 2.0), options);
  encoder.name = "encoder";
  ElementSpec mux{"splitmuxsink", kRecorderName, {}};
  // Matroska: a file cut short by a power failure still plays up to the cut (MP4 does not).
  mux.set("muxer-factory", "matroskamux");
  mux.set("max-size-time",
          std::to_string(static_cast<unsigned long long>(std::llround(video.segment_s * 1e9))));
  mux.set("async-finalize", "false");
  return {queue, ElementSpec{"videoconvert", {}, {}}, caps_spec("video/x-raw,format=I420"), encoder,
          mux};
}

// A queue that drops the oldest frame rather than make the tee wait, then an appsink that
// hands each frame to the runtime: a live view's frames.
std::vector<ElementSpec> view_branch(StreamView view) {
  ElementSpec queue{"queue", view_queue_name(view), {}};
  queue.set("leaky", "downstream").set("max-size-buffers", "1");
  queue.set("max-size-bytes", "0").set("max-size-time", "0");
  ElementSpec sink{"appsink", view_sink_name(view), {}};
  sink.set("sync", "false").set("async", "false").set("max-buffers", "1");
  sink.set("drop", "true").set("enable-last-sample", "false");
  return {queue, sink};
}

}  // namespace

std::string view_sink_name(StreamView view) {
  return "view-" + std::string(to_string(view));
}

std::string view_queue_name(StreamView view) {
  return view_sink_name(view) + "-queue";
}

ElementSpec h264_encoder(VideoEncoder choice, int bitrate_kbps, int key_interval,
                         const PlanOptions& options) {
  const bool nvenc =
      choice == VideoEncoder::Nvenc || (choice == VideoEncoder::Auto && options.nvenc_available);
  ElementSpec encoder{nvenc ? "nvh264enc" : "x264enc", {}, {}};
  encoder.set("bitrate", std::to_string(bitrate_kbps));
  if (nvenc) {
    encoder.set("gop-size", std::to_string(key_interval));
    encoder.set("zerolatency", "true").set("bframes", "0");
  } else {
    // No B-frames and no look-ahead: a frame leaves the encoder as soon as it is coded.
    encoder.set("tune", "zerolatency").set("speed-preset", "ultrafast");
    encoder.set("key-int-max", std::to_string(key_interval));
  }
  return encoder;
}

int key_frame_interval(double fps, double seconds) {
  return fps > 0 ? std::max(1, static_cast<int>(std::lround(seconds * fps)))
                 : static_cast<int>(std::lround(25 * seconds));
}

double nominal_fps(const SourceConfig& source) {
  return std::visit(
      [](const auto& s) -> double {
        if constexpr (requires { s.fps; }) return s.fps.fps();
        return 0.0;
      },
      source);
}

bool wants_raw_frames(const OutputsConfig& outputs) {
  return outputs.fits.every_s > 0 || outputs.fits.on_detection || outputs.preview.every_s > 0 ||
         (outputs.clips.enabled && outputs.clips.fits);
}

std::string fraction_text(const FrameRate& rate) {
  return std::to_string(rate.num) + "/" + std::to_string(rate.den);
}

std::string source_launch(const SourceConfig& source, bool* live) {
  bool is_live = true;
  bool loop_by_seek = false;
  std::vector<ElementSpec> elements;
  std::string launch;
  if (const auto* sky = std::get_if<SkySourceConfig>(&source)) {
    elements = sky_source(*sky);
    is_live = sky->live;
  } else if (const auto* file = std::get_if<FileSourceConfig>(&source)) {
    elements = file_source(*file, &loop_by_seek);
    is_live = false;
  } else if (const auto* v4l2 = std::get_if<V4l2SourceConfig>(&source)) {
    elements = v4l2_source(*v4l2);
  } else if (const auto* rtsp = std::get_if<RtspSourceConfig>(&source)) {
    elements = rtsp_source(*rtsp);
  } else if (const auto* aravis = std::get_if<AravisSourceConfig>(&source)) {
    elements = aravis_source(*aravis);
  } else if (const auto* gst = std::get_if<GstSourceConfig>(&source)) {
    launch = gst->launch;
  }
  if (live != nullptr) *live = is_live;
  return launch.empty() ? launch_text(elements) : launch;
}

ChainSplit split_chain(const ChainConfig& chain) {
  ChainSplit split;
  split.chain = chain.stages;
  if (!split.chain.empty()) {
    if (const auto* detect = std::get_if<DetectParams>(&split.chain.back().params)) {
      split.detect = *detect;
      split.chain.pop_back();
    }
  }
  return split;
}

std::vector<std::pair<std::string, std::string>> detect_properties(const DetectParams& params) {
  return stage_key_values(params);
}

PipelinePlan plan_pipeline(const PipelineConfig& config, const PlanOptions& options) {
  PipelinePlan plan;
  plan.name = config.name;
  try {
    plan.source_launch = source_launch(config.source, &plan.live);
  } catch (const Error& e) {
    throw Error("pipeline '" + config.name + "': " + e.problem(), e.allowed());
  }
  bool grey_source = std::holds_alternative<SkySourceConfig>(config.source) ||
                     std::holds_alternative<AravisSourceConfig>(config.source);
  if (const auto* file = std::get_if<FileSourceConfig>(&config.source)) {
    const std::string path = file->path.string();
    // multifilesrc and siftfitssrc loop by themselves; a video is sought back to its start.
    plan.loop_file = file->loop && path.find('%') == std::string::npos && !is_fits_path(path);
    grey_source = is_fits_path(path);
  }
  if (!grey_source) {
    // Any camera format to the grey formats the chain reads; a grey source passes as it is.
    plan.convert = {ElementSpec{"videoconvert", "convert", {}},
                    caps_spec("video/x-raw,format={GRAY16_LE,GRAY8}")};
  }

  ElementSpec queue{"queue", kChainQueueName, {}};
  queue.set("max-size-buffers", std::to_string(config.depth + 2));
  queue.set("max-size-bytes", "0").set("max-size-time", "0");
  // A live source does not wait: a frame the chain cannot take in time is dropped here (the
  // oldest first) and shows as a gap; a file or a non-live sky waits for the chain instead.
  if (plan.live) queue.set("leaky", "downstream");
  plan.chain_line.push_back(queue);

  const int bit_depth = source_bit_depth(config.source);
  const ChainSplit split = split_chain(config.chain.config);
  const std::vector<StreamView> views = views_wanted(config.outputs);
  const auto wants = [&](StreamView view) {
    return std::find(views.begin(), views.end(), view) != views.end();
  };
  // Each live view taps the line where its frames are: the raw tee, a tee after siftchain
  // (the chain's output before detection), a tee after siftdetect (its output carries the
  // catalogue and the movers as metas). A view whose point is missing taps the one before.
  std::string whitened_tap = kRawTeeName;
  std::string detections_tap = kRawTeeName;
  if (!split.chain.empty()) {
    ElementSpec chain{"siftchain", kChainName, {}};
    chain.set("chain", chain_flow_yaml(split.chain));
    add_engine_properties(chain, config, bit_depth);
    plan.chain_line.push_back(chain);
    if (wants(StreamView::Whitened) || (wants(StreamView::Detections) && !split.detect)) {
      plan.chain_line.push_back(ElementSpec{"tee", kWhitenedTeeName, {}});
      whitened_tap = detections_tap = kWhitenedTeeName;
    }
  }
  if (split.detect) {
    ElementSpec detect{"siftdetect", kDetectName, {}};
    for (auto& [key, value] : detect_properties(*split.detect)) detect.set(key, value);
    const TrackerConfig& tracker = config.tracker;
    detect.set("gate", number_text(tracker.params.gate));
    detect.set("confirm", std::to_string(tracker.params.confirm));
    detect.set("coast", std::to_string(tracker.params.coast));
    detect.set("min-speed", number_text(tracker.params.min_speed));
    detect.set("max-speed", number_text(tracker.params.max_speed));
    detect.set("merge-streaks", tracker.merge_streaks ? "true" : "false");
    add_engine_properties(detect, config, split.chain.empty() ? bit_depth : 0);
    // The runtime reads the catalogue and tracks from the buffers' metas; the element's own
    // outputs stay off.
    detect.set("roi-metas", "false").set("post-messages", "false");
    plan.chain_line.push_back(detect);
    plan.has_detect = true;
    if (wants(StreamView::Detections)) {
      plan.chain_line.push_back(ElementSpec{"tee", kDetectedTeeName, {}});
      detections_tap = kDetectedTeeName;
    }
  }
  for (const StreamView view : views) {
    const std::string tap = view == StreamView::Raw        ? std::string(kRawTeeName)
                            : view == StreamView::Whitened ? whitened_tap
                                                           : detections_tap;
    plan.view_branches.push_back(ViewBranch{view, tap, view_branch(view)});
  }
  ElementSpec sink{"fakesink", kSinkName, {}};
  // The chain's output, read by the runtime's probe: the last element before the sink that
  // is not a tee.
  for (auto it = plan.chain_line.rbegin(); it != plan.chain_line.rend(); ++it) {
    if (it->factory != "tee") {
      plan.chain_output = it->name;
      break;
    }
  }
  sink.set("sync", "false").set("async", "false").set("enable-last-sample", "false");
  plan.chain_line.push_back(sink);

  const OutputsConfig& out = config.outputs;
  if (wants_raw_frames(out)) {
    ElementSpec fq{"queue", "frames-queue", {}};
    fq.set("leaky", "downstream").set("max-size-buffers", "2");
    fq.set("max-size-bytes", "0").set("max-size-time", "0");
    ElementSpec appsink{"appsink", kFramesSinkName, {}};
    appsink.set("sync", "false").set("async", "false").set("max-buffers", "2");
    appsink.set("drop", "true").set("enable-last-sample", "false");
    plan.frames_branch = {fq, appsink};
  }
  if (out.video.enabled) plan.video_branch = video_branch(config, options);
  return plan;
}

std::string PipelinePlan::describe() const {
  std::string text = source_launch;
  if (!convert.empty()) text += " ! " + launch_text(convert);
  text += " ! tee name=raw ! " + launch_text(chain_line);
  if (!frames_branch.empty()) text += "  raw. ! " + launch_text(frames_branch);
  if (!video_branch.empty()) text += "  raw. ! " + launch_text(video_branch);
  for (const ViewBranch& b : view_branches) text += "  " + b.tap + ". ! " + launch_text(b.elements);
  return text;
}

const ElementSpec* PipelinePlan::find(const std::string& element) const {
  for (const auto* list : {&chain_line, &frames_branch, &video_branch, &convert}) {
    for (const ElementSpec& e : *list) {
      if (e.name == element) return &e;
    }
  }
  for (const ViewBranch& b : view_branches) {
    for (const ElementSpec& e : b.elements) {
      if (e.name == element) return &e;
    }
  }
  return nullptr;
}

}  // namespace starsift::daemon
