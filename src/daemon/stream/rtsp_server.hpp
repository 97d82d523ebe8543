// SPDX-License-Identifier: LGPL-2.1-or-later
// The host's RTSP server (gst-rtsp-server): each pipeline's live views mounted at
// rtsp://<address>:<port>/<pipeline>/<view> (docs/publishing.md, "Live video").
//
// Each mount is a shared media: the first client makes one small pipeline
//   appsrc (the view's frames) ! videoconvert ! H.264 encoder ! rtph264pay
// and every later client joins it, so a view is encoded once however many watch it, and not
// at all while nobody does (the media goes with its last client). A client that starts to
// play asks the encoder for a key frame, so its picture starts at once, not at the next
// scheduled key frame.
//
// The server runs on a GLib main context and thread of its own: RTSP clients never wait on
// the daemon's main loop, nor the daemon on them. With a user name and password, every
// mount asks for them (Basic authentication); without, anyone who reaches the address may
// watch, which is why it listens on 127.0.0.1 unless the config says otherwise.
#pragma once

#include <gst/rtsp-server/rtsp-server.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "daemon/config/daemon_config.hpp"
#include "daemon/stream/view_feed.hpp"

namespace starsift::daemon {

// A pipeline's feeds by view (StreamView's value); null where the view is not served.
using ViewFeeds = std::array<std::shared_ptr<ViewFeed>, kStreamViews>;

struct RtspCounts {
  int clients = 0;                // connected now
  std::uint64_t connections = 0;  // since the start
};

// The appsrcs of the server's medias attached to feeds, so that the server can let go of them
// itself (a mount removed, the server replaced) whether or not their medias end. Shared with
// the medias' signal handlers.
class RtspAttachments {
 public:
  ~RtspAttachments() { end(nullptr); }
  void add(const std::shared_ptr<ViewFeed>& feed, GstElement* appsrc);  // attaches it
  // Detaches `appsrc`; with `end`, it gets the end of the stream too.
  void remove(GstElement* appsrc, bool end);
  // Detaches and ends every appsrc of `feed` (nullptr: of every feed).
  void end(const ViewFeed* feed);

 private:
  struct Entry {
    std::weak_ptr<ViewFeed> feed;
    GstElement* appsrc = nullptr;  // referenced
  };
  void release(Entry& e, bool end);
  std::mutex mutex_;
  std::vector<Entry> list_;
};

class RtspServer {
 public:
  // Listens on config.address:config.port; throws Error naming the address and the reason
  // when it cannot. `encoder_launch` is the encoder's gst-launch text (pipeline_plan's
  // h264_encoder, which the caller chooses with the host's NVENC in mind).
  RtspServer(const RtspConfig& config, std::string encoder_launch);
  ~RtspServer();  // every client disconnected, every feed ended
  RtspServer(const RtspServer&) = delete;
  RtspServer& operator=(const RtspServer&) = delete;

  // Mounts `pipeline`'s feeds of `views` (each must be in `feeds`): a mount that serves the
  // same feed already is kept, with its clients; the pipeline's other mounts are removed
  // (their clients get the end of the stream).
  void mount(const std::string& pipeline, const ViewFeeds& feeds,
             const std::vector<StreamView>& views);
  void unmount(const std::string& pipeline);

  const RtspConfig& config() const noexcept { return config_; }
  int port() const noexcept { return port_; }
  std::string url(const std::string& pipeline, StreamView view) const;
  RtspCounts counts() const noexcept {
    return {counters_->clients.load(), counters_->connections.load()};
  }

 private:
  static std::string path(const std::string& pipeline, StreamView view);
  void add_mount(const std::string& path, const std::shared_ptr<ViewFeed>& feed);
  void remove_mount(const std::string& path);
  static void on_client_connected(GstRTSPServer* server, GstRTSPClient* client, gpointer self);

  const RtspConfig config_;
  const std::string launch_;
  GMainContext* context_ = nullptr;
  GMainLoop* loop_ = nullptr;
  GstRTSPServer* server_ = nullptr;
  GSource* listen_source_ = nullptr;
  GSource* cleanup_source_ = nullptr;
  std::thread thread_;
  int port_ = 0;

  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<ViewFeed>> feeds_;  // by mount path
  std::shared_ptr<RtspAttachments> attachments_ = std::make_shared<RtspAttachments>();

  // Shared with the clients' signal handlers, which a client may outlive the server with.
  struct Counters {
    std::atomic<int> clients{0};
    std::atomic<std::uint64_t> connections{0};
  };
  std::shared_ptr<Counters> counters_ = std::make_shared<Counters>();
};

}  // namespace starsift::daemon
