// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/config/daemon_config.hpp"

#include <algorithm>
#include <type_traits>

#include "daemon/config/config_names.hpp"

namespace starsift::daemon {

namespace {

constexpr Named<LogLevel> kLogLevels[] = {
    {"trace", LogLevel::Trace}, {"debug", LogLevel::Debug}, {"info", LogLevel::Info},
    {"warn", LogLevel::Warn},   {"error", LogLevel::Error}, {"critical", LogLevel::Critical}};
constexpr Named<Backend> kBackends[] = {
    {"auto", Backend::Auto}, {"cuda", Backend::Cuda}, {"cpu", Backend::Cpu}};
constexpr Named<RtspTransport> kTransports[] = {
    {"tcp", RtspTransport::Tcp}, {"udp", RtspTransport::Udp}, {"auto", RtspTransport::Auto}};
constexpr Named<VideoEncoder> kEncoders[] = {
    {"auto", VideoEncoder::Auto}, {"x264", VideoEncoder::X264}, {"nvenc", VideoEncoder::Nvenc}};
constexpr Named<StreamView> kViewNames[] = {{"raw", StreamView::Raw},
                                            {"whitened", StreamView::Whitened},
                                            {"detections", StreamView::Detections}};
constexpr Named<PsfKind> kPsfs[] = {{"gaussian", PsfKind::Gaussian}, {"moffat", PsfKind::Moffat}};
constexpr Named<PixelFormat> kSkyFormats[] = {{"GRAY16_LE", PixelFormat::Gray16},
                                              {"GRAY8", PixelFormat::Gray8}};

}  // namespace

std::span<const Named<LogLevel>> log_level_names() noexcept {
  return kLogLevels;
}
std::span<const Named<Backend>> backend_names() noexcept {
  return kBackends;
}
std::span<const Named<RtspTransport>> rtsp_transport_names() noexcept {
  return kTransports;
}
std::span<const Named<VideoEncoder>> video_encoder_names() noexcept {
  return kEncoders;
}
std::span<const Named<StreamView>> stream_view_names() noexcept {
  return kViewNames;
}
std::span<const Named<PsfKind>> psf_names() noexcept {
  return kPsfs;
}
std::span<const Named<PixelFormat>> sky_format_names() noexcept {
  return kSkyFormats;
}

std::string FrameRate::str() const {
  if (den == 1 || num == 0) return std::to_string(num);
  return std::to_string(num) + "/" + std::to_string(den);
}

std::string_view to_string(LogLevel level) noexcept {
  return name_of(log_level_names(), level);
}

std::string_view to_string(RtspTransport transport) noexcept {
  return name_of(rtsp_transport_names(), transport);
}

std::vector<StreamView> views_wanted(const OutputsConfig& outputs) {
  std::vector<StreamView> views;
  for (int v = 0; v < kStreamViews; ++v) {
    const auto view = static_cast<StreamView>(v);
    const auto& rtsp = outputs.rtsp.streams;
    const bool sent =
        (outputs.rtp && outputs.rtp->view == view) || (outputs.shm && outputs.shm->view == view);
    const bool clipped = outputs.clips.enabled && outputs.clips.view == view;
    if (sent || clipped || std::find(rtsp.begin(), rtsp.end(), view) != rtsp.end()) {
      views.push_back(view);
    }
  }
  return views;
}

std::string_view to_string(StreamView view) noexcept {
  return name_of(stream_view_names(), view);
}

std::string_view to_string(VideoEncoder encoder) noexcept {
  return name_of(video_encoder_names(), encoder);
}

std::string_view source_kind(const SourceConfig& source) noexcept {
  return std::visit(
      [](const auto& kind) -> std::string_view {
        using Kind = std::decay_t<decltype(kind)>;
        if constexpr (std::is_same_v<Kind, SkySourceConfig>) return "sky";
        if constexpr (std::is_same_v<Kind, FileSourceConfig>) return "file";
        if constexpr (std::is_same_v<Kind, V4l2SourceConfig>) return "v4l2";
        if constexpr (std::is_same_v<Kind, RtspSourceConfig>) return "rtsp";
        if constexpr (std::is_same_v<Kind, AravisSourceConfig>) return "aravis";
        if constexpr (std::is_same_v<Kind, GstSourceConfig>) return "gst";
      },
      source);
}

bool PipelineChain::operator==(const PipelineChain& other) const {
  if (config.stages.size() != other.config.stages.size()) return false;
  for (std::size_t i = 0; i < config.stages.size(); ++i) {
    const StageConfig& a = config.stages[i];
    const StageConfig& b = other.config.stages[i];
    if (a.filter != b.filter || !(a.params == b.params)) return false;
  }
  return true;
}

const PipelineConfig* DaemonConfig::find_pipeline(std::string_view name) const noexcept {
  for (const PipelineConfig& pipeline : pipelines) {
    if (pipeline.name == name) return &pipeline;
  }
  return nullptr;
}

}  // namespace starsift::daemon
