// SPDX-License-Identifier: LGPL-2.1-or-later
// starsiftd's configuration: what the YAML file (config/README.md, "starsiftd") says, as plain
// structs. Every value here has been checked by parse_daemon_config() (config_loader.hpp);
// the defaults are those of a key left out, chosen to work on a real camera host. Durations are
// seconds (`_s`), sizes bytes. No GStreamer here: the daemon's runtime maps these onto
// elements.
//
// operator== compares what a pipeline does, never where it was written, so a reload can tell
// the pipelines that did not change (and leave them running) from those that did.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "pipeline/backend.hpp"
#include "pipeline/chain/chain_config.hpp"
#include "pipeline/detect/tracker.hpp"
#include "pipeline/sky/sky_params.hpp"

namespace starsift::daemon {

// ---- values shared by several keys -------------------------------------------------------

// A frame rate as a reduced fraction, so rates such as 30000/1001 reach the caps exactly.
// Written as an integer (25), a decimal (24.98 -> 1249/50) or a fraction ("30000/1001").
// num == 0 means "not set": the source's own rate.
struct FrameRate {
  int num = 0;
  int den = 1;

  bool is_set() const noexcept { return num > 0; }
  double fps() const noexcept { return den > 0 ? static_cast<double>(num) / den : 0.0; }
  std::string str() const;  // "25", "30000/1001"; "0" when not set
  bool operator==(const FrameRate&) const = default;
};

// The highest frame rate a source may ask for.
inline constexpr int kMaxFps = 1000;

// ---- global ------------------------------------------------------------------------------

// spdlog's levels, by their spdlog names.
enum class LogLevel { Trace, Debug, Info, Warn, Error, Critical };
std::string_view to_string(LogLevel level) noexcept;

struct LogConfig {
  LogLevel level = LogLevel::Info;  // `level`: the least severe message written
  bool operator==(const LogConfig&) const = default;
};

// Prometheus metrics and /healthz over HTTP.
struct MetricsConfig {
  static constexpr int kDefaultPort = 9464;  // the port OpenTelemetry's Prometheus exporter uses
  std::string address = "127.0.0.1";         // `address`: an IPv4 or IPv6 literal to listen on
  int port = kDefaultPort;                   // `port`: 1..65535; 0 turns the endpoint off
  bool enabled() const noexcept { return port != 0; }
  bool operator==(const MetricsConfig&) const = default;
};

// The disk-space guard of the state directory: nights are deleted oldest first.
struct DiskConfig {
  static constexpr std::uint64_t kDefaultMinFreeBytes = std::uint64_t{5} << 30;  // 5 GiB
  static constexpr int kMaxKeepNights = 36500;
  // `min-free`: the oldest night goes while the file system has less free than this; 0 never
  // deletes for space.
  std::uint64_t min_free_bytes = kDefaultMinFreeBytes;
  // `keep-nights`: the most nights kept, the oldest going first; 0 = no limit.
  int keep_nights = 0;
  bool operator==(const DiskConfig&) const = default;
};

// ---- sources -----------------------------------------------------------------------------

// `sky`: the synthetic sky of siftskysrc, seeded, with known movers; needs no camera.
struct SkySourceConfig {
  SkyParams params;                          // width, height, seed and every siftskysrc property
  PixelFormat format = PixelFormat::Gray16;  // `format`: GRAY16_LE or GRAY8
  FrameRate fps{25, 1};                      // `fps`: frames per second, > 0
  bool live = true;  // `live`: frames at the frame rate, as a camera gives them
  bool operator==(const SkySourceConfig&) const = default;
};

// `file`: a video file GStreamer decodes, or an image sequence (a printf pattern such as
// frames/frame_%06d.png).
struct FileSourceConfig {
  std::filesystem::path path;  // `path`: required; relative to the config file's directory
  bool loop = false;           // `loop`: start again at the end instead of ending the pipeline
  FrameRate fps;               // `fps`: the rate to play at; not set = the file's own
  bool operator==(const FileSourceConfig&) const = default;
};

// `v4l2`: a Video4Linux2 camera.
struct V4l2SourceConfig {
  std::string device = "/dev/video0";  // `device`: an absolute path
  int width = 0;                       // `width`, `height`: 0 = the camera's choice
  int height = 0;
  FrameRate fps;       // `fps`: not set = the camera's choice
  std::string format;  // `format`: a name of kV4l2Formats; empty = the camera's choice
  bool operator==(const V4l2SourceConfig&) const = default;
};

// The formats a v4l2 source may ask for: GStreamer's raw video names, and MJPG (decoded).
inline constexpr std::string_view kV4l2Formats[] = {
    "GRAY8", "GRAY16_LE", "YUY2", "UYVY", "NV12", "I420", "RGB", "BGR", "RGBx", "BGRx", "MJPG"};

enum class RtspTransport { Tcp, Udp, Auto };
std::string_view to_string(RtspTransport transport) noexcept;

// `rtsp`: an IP camera's RTSP stream, reconnected when it fails.
struct RtspSourceConfig {
  // `url`: rtsp://, rtsps://, rtspt://, rtspu:// or rtsph://; may hold user:password@, so the
  // config file should not be world-readable.
  std::string url;
  int latency_ms = 200;  // `latency-ms`: the jitter buffer, 0..10000
  // `timeout-s`: connecting, and each RTSP request (TEARDOWN included), gives up after this
  // long, so a dead camera never blocks a restart or shutdown. > 0, at most 600.
  double timeout_s = 10.0;
  RtspTransport transport = RtspTransport::Tcp;  // `transport`: tcp (no lost packets), udp, auto
  bool operator==(const RtspSourceConfig&) const = default;
};

// `aravis`: a GigE Vision or USB3 Vision camera through aravis. A key left out leaves the
// camera's own setting.
struct AravisSourceConfig {
  std::string camera;                 // `camera`: aravis's id ("Vendor-Serial"); empty = the first
  std::optional<double> exposure_us;  // `exposure-us`: 1..600e6
  std::optional<double> gain_db;      // `gain-db`: 0..100
  FrameRate fps;                      // `fps`: not set = the camera's
  std::string pixel_format;  // `pixel-format`: one of kAravisPixelFormats; empty = the camera's
  int packet_size = 0;       // `packet-size`: GigE packet bytes, 576..9000; 0 = negotiated
  bool operator==(const AravisSourceConfig&) const = default;
};

// Camera pixel formats (GenICam names) that reach the chain as grey frames.
inline constexpr std::string_view kAravisPixelFormats[] = {"Mono8", "Mono10", "Mono12", "Mono16"};

// `gst`: anything else, as a gst-launch description whose last element gives the frames
// (e.g. "udpsrc port=5000 ! ... ! videoconvert"); the runtime parses it.
struct GstSourceConfig {
  std::string launch;  // `launch`: required, not empty
  bool operator==(const GstSourceConfig&) const = default;
};

// Exactly one kind per source; the YAML key names it.
using SourceConfig = std::variant<SkySourceConfig, FileSourceConfig, V4l2SourceConfig,
                                  RtspSourceConfig, AravisSourceConfig, GstSourceConfig>;

// "sky", "file", "v4l2", "rtsp", "aravis", "gst": the key of the kind `source` holds.
std::string_view source_kind(const SourceConfig& source) noexcept;

// ---- chain, restart, outputs -------------------------------------------------------------

// The chain (siftchain's schema, read by parse_chain_yaml()): written inline under `chain:`,
// or the path of a chain file.
struct PipelineChain {
  ChainConfig config;
  std::filesystem::path file;  // the chain file it was read from; empty when inline

  // The same filters in the same order with the same parameters; where they were written (the
  // file, the places) does not count.
  bool operator==(const PipelineChain& other) const;
};

// Restarting a source that failed or stalled: the wait doubles from initial_s up to max_s,
// and starts again at initial_s once frames flow.
struct RestartConfig {
  double initial_s = 1.0;  // `initial-s`: > 0, at most max_s
  double max_s = 60.0;     // `max-s`: at most 3600
  bool operator==(const RestartConfig&) const = default;
};

// How detections are linked into tracks: siftdetect's properties of the same names, for a
// chain that ends in `detect` (docs/detect.md, "Tracks"). A change rebuilds the pipeline (the
// tracker starts over).
struct TrackerConfig {
  TrackerParams params;       // `gate`, `confirm`, `coast`, `min-speed`, `max-speed`
  bool merge_streaks = true;  // `merge-streaks`: one record per streak broken along its line
  bool operator==(const TrackerConfig&) const = default;
};

// Detections as JSON lines (siftdetect's schema), a file per night.
struct DetectionsOutput {
  bool enabled = true;  // `enabled`
  bool operator==(const DetectionsOutput&) const = default;
};

// FITS frames of the source.
struct FitsOutput {
  double every_s = 0.0;       // `every-s`: one frame every this many seconds; 0 = none
  bool on_detection = false;  // `on-detection`: the frames in which something was detected
  // `max-per-hour`: the most on-detection frames written per hour (a busy sky must not fill
  // the disk); 0 = no limit.
  int max_per_hour = 60;
  bool operator==(const FitsOutput&) const = default;
};

enum class VideoEncoder { Auto, X264, Nvenc };
inline constexpr int kMinBitrateKbps = 100;  // an encoder's bitrate-kbps
inline constexpr int kMaxBitrateKbps = 200000;
std::string_view to_string(VideoEncoder encoder) noexcept;

// Segmented video recordings of the source.
struct VideoOutput {
  bool enabled = false;                       // `enabled`: off by default (about 2 GB per hour)
  double segment_s = 600.0;                   // `segment-s`: one file per this many seconds
  VideoEncoder encoder = VideoEncoder::Auto;  // `encoder`: auto (NVENC when present, else x264)
  int bitrate_kbps = 4000;                    // `bitrate-kbps`: 100..200000
  bool operator==(const VideoOutput&) const = default;
};

// The live pictures a pipeline can be watched through (docs/live-video.md), each an 8-bit view:
// the camera's frame, the chain's output before detection, and that output with the
// detections and movers drawn on it.
enum class StreamView { Raw, Whitened, Detections };
inline constexpr int kStreamViews = 3;
std::string_view to_string(StreamView view) noexcept;

// Event clips (docs/live-video.md, "Event clips"): a view's video from before-s ahead of each
// event (a track confirmed, or with min-flux > 0 a detection that bright) to after-s past it,
// a Matroska file and its JSON in <night>/clips/. Off by default: the view is then encoded
// all the time.
struct ClipsOutput {
  static constexpr double kMaxBeforeS = 60.0;  // the ring's memory: ~1 MB a second at 2 Mb/s
  static constexpr double kMaxAfterS = 600.0;
  static constexpr double kMaxClipS = 3600.0;
  static constexpr int kMaxPerHour = 3600;
  static constexpr int kMaxFitsFrames = 1000;
  bool enabled = false;                       // `enabled`
  StreamView view = StreamView::Detections;   // `view`
  double before_s = 5.0;                      // `before-s`: 0..60
  double after_s = 5.0;                       // `after-s`: 0..600
  double max_s = 60.0;                        // `max-s`: a clip's longest, later events included
  double min_flux = 0.0;                      // `min-flux`: 0 = tracks only
  int max_per_hour = 60;                      // `max-per-hour`: 0 = no limit
  VideoEncoder encoder = VideoEncoder::Auto;  // `encoder`
  int bitrate_kbps = 4000;                    // `bitrate-kbps`: 100..200000
  // `fits`: the raw frames around the first event as a FITS cube too, at most `fits-frames`
  // (2..1000) of them, half before the event: kept in memory, so 50 frames of 1024x1024x16
  // bits are 100 MB.
  bool fits = false;
  int fits_frames = 50;
  bool operator==(const ClipsOutput&) const = default;
};

// A preview PNG (raw | whitened | detections) a person can open, rewritten in place.
struct PreviewOutput {
  double every_s = 5.0;  // `every-s`: 0 = none
  bool operator==(const PreviewOutput&) const = default;
};

// Each frame's detections line published to the config's MQTT broker (`mqtt` above), as well.
// On by default: with a broker configured, every pipeline publishes unless it says otherwise.
struct MqttOutput {
  bool enabled = true;  // `enabled`; true without a top-level `mqtt` section is refused
  bool operator==(const MqttOutput&) const = default;
};

// The pipeline's views served by the host's RTSP server (`rtsp` below), as
// rtsp://<address>:<port>/<pipeline>/<view>. With a top-level `rtsp` section and no
// `outputs.rtsp`, every view is served; without one, none (the loader resolves this).
struct RtspOutput {
  std::vector<StreamView> streams;  // `streams`: raw, whitened, detections; [] = none
  bool operator==(const RtspOutput&) const = default;
};

// `rtp`: one view's H.264 over RTP to a UDP address, unicast or multicast, sent whether or not
// anyone listens (UDP knows no receivers); an SDP file next to the pipeline's files describes
// it to a player. The section given means on.
struct RtpOutput {
  static constexpr int kDefaultBitrateKbps = 2000;
  StreamView view = StreamView::Detections;   // `view`
  std::string host;                           // `host`: required; an IP address, not 0.0.0.0/::
  int port = 0;                               // `port`: required; 1..65535
  VideoEncoder encoder = VideoEncoder::Auto;  // `encoder`: auto (NVENC when present), x264, nvenc
  int bitrate_kbps = kDefaultBitrateKbps;     // `bitrate-kbps`: 100..200000
  int ttl = 1;                                // `ttl`: hops of a multicast packet, 1..255
  bool operator==(const RtpOutput&) const = default;
};

// `shm`: one view's GRAY8 frames through GStreamer's shmsink, for a consumer on this host
// (shmsrc). The section given means on.
struct ShmOutput {
  StreamView view = StreamView::Raw;  // `view`
  // `socket-path`: required; relative to the config file's directory; its directory must
  // exist and be writable.
  std::filesystem::path socket_path;
  bool operator==(const ShmOutput&) const = default;
};

struct OutputsConfig;
// Every live view some output of the pipeline takes (RTSP, ...), each once, in StreamView's
// order: each is a branch of the pipeline and a feed.
std::vector<StreamView> views_wanted(const OutputsConfig& outputs);

struct OutputsConfig {
  DetectionsOutput detections;  // `detections`
  FitsOutput fits;              // `fits`
  VideoOutput video;            // `video`
  PreviewOutput preview;        // `preview`
  ClipsOutput clips;            // `clips`
  MqttOutput mqtt;              // `mqtt`
  RtspOutput rtsp;              // `rtsp`
  // `rtp`, `shm`: none = not sent, not shared
  std::optional<RtpOutput> rtp;
  std::optional<ShmOutput> shm;
  bool operator==(const OutputsConfig&) const = default;
};

// ---- publishing --------------------------------------------------------------------------

// TLS to the MQTT broker: its certificate checked against `ca-file`; `cert-file` and
// `key-file` (both or neither) give this host a certificate of its own.
struct MqttTlsConfig {
  std::filesystem::path ca_file;    // `ca-file`: required in `tls`; PEM
  std::filesystem::path cert_file;  // `cert-file`: PEM
  std::filesystem::path key_file;   // `key-file`: PEM, not encrypted
  bool enabled() const noexcept { return !ca_file.empty(); }
  bool operator==(const MqttTlsConfig&) const = default;
};

// libmosquitto's reconnect backoff, in whole seconds (it counts in seconds): the n-th wait
// is initial_s * n^2 (1, 4, 9, ... s), at most max_s, so a broker that is back is found
// within max_s.
struct MqttReconnectConfig {
  int initial_s = 1;  // `initial-s`: 1..3600, at most max_s
  int max_s = 10;     // `max-s`: 1..3600
  bool operator==(const MqttReconnectConfig&) const = default;
};

// The MQTT broker the pipelines' detections are published to (docs/publishing.md). One for
// the whole host: a site with a dozen cameras has one broker; each pipeline publishes on a
// topic of its own, <topic-prefix>/<host-name>/<pipeline>/detections.
struct MqttConfig {
  static constexpr int kDefaultPort = 1883;     // MQTT
  static constexpr int kDefaultTlsPort = 8883;  // MQTT over TLS
  static constexpr int kMaxQueue = 1000000;
  std::string host;                       // `host`: required: a host name or an IP address
  int port = kDefaultPort;                // `port`: 1..65535; 8883 when left out and `tls` is given
  std::string username;                   // `username`: empty = none
  std::string password;                   // `password`: only with a username
  MqttTlsConfig tls;                      // `tls`: off unless given
  std::string topic_prefix = "starsift";  // `topic-prefix`: one or more topic levels
  // `host-name`: this host in topics and client ids; empty = the system's host name.
  std::string host_name;
  int qos = 1;                    // `qos`: 0, 1 (at least once), 2
  int queue = 10000;              // `queue`: messages kept while the broker is away, 1..kMaxQueue
  int keepalive_s = 60;           // `keepalive-s`: 5..3600
  MqttReconnectConfig reconnect;  // `reconnect`
  bool operator==(const MqttConfig&) const = default;
};

// The host's RTSP server (gst-rtsp-server): one for all pipelines, each view a mount with one
// shared encoder however many clients watch it; nothing is encoded while nobody watches.
struct RtspConfig {
  static constexpr int kDefaultPort = 8554;
  std::string address = "127.0.0.1";          // `address`: an IP address to listen on
  int port = kDefaultPort;                    // `port`: 1..65535
  std::string username;                       // `username`: with `password`, Basic auth
  std::string password;                       // `password`
  VideoEncoder encoder = VideoEncoder::Auto;  // `encoder`: auto (NVENC when present), x264, nvenc
  int bitrate_kbps = 2000;                    // `bitrate-kbps`: 100..200000, per view
  bool operator==(const RtspConfig&) const = default;
};

// ---- pipelines and the whole file --------------------------------------------------------

inline constexpr int kMaxPipelineNameLength = 32;
// Cameras per host; also bounds what a few bytes of YAML aliases can ask for.
inline constexpr int kMaxPipelines = 64;

struct PipelineConfig {
  // `name`: required, unique, [a-z0-9][a-z0-9_-]{0,31}: it names the pipeline's directories,
  // metrics labels and log fields.
  std::string name;
  SourceConfig source;              // `source`: required
  PipelineChain chain;              // `chain`: required
  Backend backend = Backend::Auto;  // `backend`: auto (CUDA when usable, else the CPU), cuda, cpu
  int device = 0;                   // `device`: the CUDA device ordinal, 0..1023
  int depth = 3;                    // `depth`: frames in flight, 1..kMaxStreamingDepth
  double stall_timeout_s = 5.0;     // `stall-timeout-s`: no frame for this long restarts the source
  RestartConfig restart;            // `restart`
  TrackerConfig tracker;            // `tracker`
  OutputsConfig outputs;            // `outputs`
  bool operator==(const PipelineConfig&) const = default;
};

struct DaemonConfig {
  // `state-directory`: where the nights' files go; relative paths are taken from the config
  // file's directory.
  std::filesystem::path state_directory = "/var/lib/starsift";
  LogConfig log;          // `log`
  MetricsConfig metrics;  // `metrics`
  DiskConfig disk;        // `disk`
  double shutdown_timeout_s =
      10.0;  // `shutdown-timeout-s`: SIGTERM to exit, files finalised; 0.1..600
  std::vector<PipelineConfig> pipelines;  // `pipelines`: 1..kMaxPipelines, names unique
  std::optional<MqttConfig> mqtt;         // `mqtt`: the broker; none = nothing published
  std::optional<RtspConfig> rtsp;         // `rtsp`: the RTSP server; none = not served

  // The pipeline called `name`, or nullptr.
  const PipelineConfig* find_pipeline(std::string_view name) const noexcept;
  bool operator==(const DaemonConfig&) const = default;
};

}  // namespace starsift::daemon
