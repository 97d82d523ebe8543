// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/stream/view_sender.hpp"

#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <gst/video/video.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "pipeline/error.hpp"

namespace starsift::daemon {

namespace {

// The appsrc of an RTSP media's, so that a sender behaves as a watching client does.
constexpr const char* kAppsrc =
    "appsrc name=frames is-live=true format=time max-buffers=2 "
    "leaky-type=downstream block=false";
// The frames shmsink's area holds: one being read, one being written and two on the way.
constexpr std::uint64_t kShmFrames = 4;
constexpr std::uint64_t kShmSlack = 4096;  // a page a frame for the area's alignment

// A value of a gst-launch property, quoted.
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

bool is_ipv6(const std::string& host) {
  return host.find(':') != std::string::npos;
}

bool is_multicast(const std::string& host) {
  unsigned char bytes[16] = {};
  if (::inet_pton(AF_INET, host.c_str(), bytes) == 1) return (bytes[0] & 0xf0) == 0xe0;
  if (::inet_pton(AF_INET6, host.c_str(), bytes) == 1) return bytes[0] == 0xff;
  return false;
}

// A socket at `path` left by a process that ended is removed (shmsink would otherwise take
// "<path>.0" and the consumer would not find it); one a process serves, or a file that is
// not a socket, is refused.
void clear_stale_socket(const std::filesystem::path& path) {
  std::error_code error;
  const auto status = std::filesystem::symlink_status(path, error);
  if (error || !std::filesystem::exists(status)) return;
  const std::string allowed = "a socket path no other process uses (outputs.shm.socket-path)";
  if (status.type() != std::filesystem::file_type::socket) {
    throw Error("shm: " + path.string() + " exists and is not a socket", allowed);
  }
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  const bool served = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  if (served) throw Error("shm: another process serves " + path.string(), allowed);
  std::filesystem::remove(path, error);
}

void check_socket_directory(const std::filesystem::path& path) {
  std::filesystem::path directory = path.parent_path();
  if (directory.empty()) directory = ".";
  const std::string allowed =
      "a socket path in a directory that exists and is writable (outputs.shm.socket-path)";
  std::error_code error;
  if (!std::filesystem::is_directory(directory, error)) {
    throw Error(
        "shm: the directory " + directory.string() + " of " + path.string() + " does not exist",
        allowed);
  }
  if (::access(directory.c_str(), W_OK | X_OK) != 0) {
    throw Error(
        "shm: the directory " + directory.string() + " is not writable: " + std::strerror(errno),
        allowed);
  }
}

// shmsink warns in its debug log of what is normal here (a consumer that leaves; the area
// resized to the frames, which it reports as failed when it worked; its poll thread stopped),
// and the daemon writes GStreamer's warnings to its log. Its errors still reach the bus. Left
// as they are when GST_DEBUG asks for GStreamer's own log.
void quiet_shmsink_log() {
  if (std::getenv("GST_DEBUG") == nullptr) {
    gst_debug_set_threshold_for_name("shmsink", GST_LEVEL_ERROR);
  }
}

void write_file_atomically(const std::filesystem::path& path, const std::string& text) {
  const std::filesystem::path temporary = path.string() + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) throw Error("rtp: cannot write " + temporary.string(), "a writable state-directory");
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    throw Error("rtp: cannot write " + path.string() + ": " + error.message(),
                "a writable state-directory");
  }
}

}  // namespace

std::string rtp_sdp(const std::string& name, const std::string& host, int port, int ttl) {
  const bool v6 = is_ipv6(host);
  const std::string family = v6 ? "IP6" : "IP4";
  std::string connection = host;
  if (!v6 && is_multicast(host)) connection += "/" + std::to_string(ttl);
  return "v=0\r\n"
         "o=- 0 0 IN " +
         family + (v6 ? " ::1" : " 127.0.0.1") + "\r\ns=" + name + "\r\nc=IN " + family + " " +
         connection + "\r\nt=0 0\r\nm=video " + std::to_string(port) +
         " RTP/AVP 96\r\na=rtpmap:96 H264/90000\r\na=fmtp:96 packetization-mode=1\r\n";
}

ViewSender::ViewSender(std::string pipeline, std::string output, std::shared_ptr<ViewFeed> feed,
                       std::shared_ptr<spdlog::logger> log)
    : pipeline_(std::move(pipeline)),
      output_(std::move(output)),
      feed_(std::move(feed)),
      log_(log ? std::move(log) : spdlog::default_logger()) {}

std::unique_ptr<ViewSender> ViewSender::rtp(const std::string& pipeline, const RtpOutput& output,
                                            const std::string& encoder_launch,
                                            const std::filesystem::path& sdp_path,
                                            std::shared_ptr<ViewFeed> feed,
                                            std::shared_ptr<spdlog::logger> log) {
  std::unique_ptr<ViewSender> sender(new ViewSender(pipeline, "rtp", std::move(feed), log));
  const std::string launch =
      std::string(kAppsrc) + " ! videoconvert ! video/x-raw,format=I420 ! " + encoder_launch +
      " ! rtph264pay config-interval=-1 pt=96 ! udpsink host=" + quoted(output.host) +
      " port=" + std::to_string(output.port) + " ttl-mc=" + std::to_string(output.ttl) +
      " sync=false async=false";
  sender->start(launch);
  write_file_atomically(sdp_path,
                        rtp_sdp("starsift " + pipeline + " " + std::string(to_string(output.view)),
                                output.host, output.port, output.ttl));
  const std::string where = is_ipv6(output.host) ? "[" + output.host + "]" : output.host;
  sender->log_->info("live view {} over RTP to {}:{} ({}); SDP: {}", to_string(output.view), where,
                     output.port, encoder_launch.substr(0, encoder_launch.find(' ')),
                     sdp_path.string());
  return sender;
}

std::unique_ptr<ViewSender> ViewSender::shm(const std::string& pipeline, const ShmOutput& output,
                                            std::shared_ptr<ViewFeed> feed,
                                            std::shared_ptr<spdlog::logger> log) {
  check_socket_directory(output.socket_path);
  clear_stale_socket(output.socket_path);
  quiet_shmsink_log();
  std::unique_ptr<ViewSender> sender(new ViewSender(pipeline, "shm", std::move(feed), log));
  // The area's size is set from the frames' caps when they come (on_shm_caps).
  const std::string launch = std::string(kAppsrc) + " ! shmsink name=sink socket-path=" +
                             quoted(output.socket_path.string()) +
                             " wait-for-connection=false sync=false async=false";
  sender->start(launch);
  sender->log_->info("live view {} in shared memory at {} (shmsrc socket-path={} is-live=true)",
                     to_string(output.view), output.socket_path.string(),
                     output.socket_path.string());
  return sender;
}

void ViewSender::start(const std::string& launch) {
  GError* error = nullptr;
  bin_ = gst_parse_launch(launch.c_str(), &error);
  if (bin_ == nullptr || error != nullptr) {
    const std::string why = error != nullptr ? error->message : "unknown";
    g_clear_error(&error);
    if (bin_ != nullptr) gst_object_unref(bin_);
    bin_ = nullptr;
    throw Error(output_ + ": cannot make the sender's pipeline: " + why,
                "the GStreamer plugins of docs/live-video.md");
  }
  const std::string name = pipeline_ + "-" + output_;
  gst_object_set_name(GST_OBJECT(bin_), name.c_str());
  GstBus* bus = gst_element_get_bus(bin_);
  gst_bus_set_sync_handler(bus, &ViewSender::on_bus, this, nullptr);
  gst_object_unref(bus);
  appsrc_ = gst_bin_get_by_name(GST_BIN(bin_), "frames");
  if (GstPad* pad = gst_element_get_static_pad(appsrc_, "src")) {
    gst_pad_add_probe(
        pad, GST_PAD_PROBE_TYPE_BUFFER,
        [](GstPad*, GstPadProbeInfo*, gpointer self) {
          static_cast<ViewSender*>(self)->frames_.fetch_add(1, std::memory_order_relaxed);
          return GST_PAD_PROBE_OK;
        },
        this, nullptr);
    gst_object_unref(pad);
  }
  if (GstElement* sink = gst_bin_get_by_name(GST_BIN(bin_), "sink")) {
    GstPad* pad = gst_element_get_static_pad(sink, "sink");
    gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, &ViewSender::on_shm_caps, this,
                      nullptr);
    gst_object_unref(pad);
    gst_object_unref(sink);
  }
  if (gst_element_set_state(bin_, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
    std::string why;
    {
      std::lock_guard lock(mutex_);
      why = first_error_.empty() ? "it cannot play" : first_error_;
    }
    gst_element_set_state(bin_, GST_STATE_NULL);
    gst_object_unref(appsrc_);
    gst_object_unref(bin_);
    appsrc_ = bin_ = nullptr;
    throw Error(output_ + ": the sender cannot start: " + why,
                "a destination this host can send to");
  }
  feed_->attach(appsrc_);
}

ViewSender::~ViewSender() {
  if (bin_ == nullptr) return;
  feed_->detach(appsrc_);
  // What stopping posts is no fault of the output (shmsink's poll thread reports its own end
  // as an error).
  GstBus* bus = gst_element_get_bus(bin_);
  gst_bus_set_sync_handler(bus, nullptr, nullptr, nullptr);
  gst_object_unref(bus);
  // udpsink and shmsink stop at once: nothing here waits on a network peer.
  gst_element_set_state(bin_, GST_STATE_NULL);
  gst_object_unref(appsrc_);
  gst_object_unref(bin_);
}

GstBusSyncReply ViewSender::on_bus(GstBus*, GstMessage* message, gpointer data) {
  auto* self = static_cast<ViewSender*>(data);
  const auto type = GST_MESSAGE_TYPE(message);
  if (type == GST_MESSAGE_ERROR || type == GST_MESSAGE_WARNING) {
    GError* error = nullptr;
    gchar* debug = nullptr;
    if (type == GST_MESSAGE_ERROR) {
      gst_message_parse_error(message, &error, &debug);
    } else {
      gst_message_parse_warning(message, &error, &debug);
    }
    const std::string text = std::string(GST_MESSAGE_SRC_NAME(message)) + ": " +
                             (error != nullptr ? error->message : "unknown") +
                             (debug != nullptr ? std::string(" (") + debug + ")" : "");
    g_clear_error(&error);
    g_free(debug);
    if (type == GST_MESSAGE_ERROR) {
      {
        std::lock_guard lock(self->mutex_);
        if (self->first_error_.empty()) self->first_error_ = text;
      }
      self->errors_.fetch_add(1);
      self->log_->error("{} sender: {}", self->output_, text);
    } else if (self->warnings_.fetch_add(1) % 1000 == 0) {
      // A network that refuses every packet warns for each: the first of each thousand.
      self->log_->warn("{} sender: {}", self->output_, text);
    }
  }
  return GST_BUS_DROP;
}

GstPadProbeReturn ViewSender::on_shm_caps(GstPad* pad, GstPadProbeInfo* info, gpointer data) {
  auto* self = static_cast<ViewSender*>(data);
  GstEvent* event = GST_PAD_PROBE_INFO_EVENT(info);
  if (GST_EVENT_TYPE(event) != GST_EVENT_CAPS) return GST_PAD_PROBE_OK;
  GstCaps* caps = nullptr;
  gst_event_parse_caps(event, &caps);
  GstVideoInfo video;
  if (caps == nullptr || !gst_video_info_from_caps(&video, caps)) return GST_PAD_PROBE_OK;
  // An area of a few frames: a consumer that holds them all makes this sender wait, and its
  // appsrc drop frames, never the pipeline.
  const std::uint64_t size = kShmFrames * (GST_VIDEO_INFO_SIZE(&video) + kShmSlack);
  if (GstElement* sink = gst_pad_get_parent_element(pad)) {
    g_object_set(sink, "shm-size", static_cast<guint>(size), nullptr);
    gst_object_unref(sink);
  }
  self->log_->info(
      "shm frames: video/x-raw,format=GRAY8,width={},height={},framerate={}/{} ({} bytes a "
      "frame, rows of {} bytes)",
      GST_VIDEO_INFO_WIDTH(&video), GST_VIDEO_INFO_HEIGHT(&video), GST_VIDEO_INFO_FPS_N(&video),
      GST_VIDEO_INFO_FPS_D(&video), GST_VIDEO_INFO_SIZE(&video),
      GST_VIDEO_INFO_PLANE_STRIDE(&video, 0));
  return GST_PAD_PROBE_OK;
}

}  // namespace starsift::daemon
