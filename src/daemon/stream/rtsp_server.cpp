// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/stream/rtsp_server.hpp"

#include <gst/app/gstappsrc.h>
#include <gst/video/video.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "pipeline/error.hpp"

namespace starsift::daemon {

namespace {

constexpr const char* kViewerRole = "viewer";
constexpr guint kSessionCleanupS = 2;  // sessions of clients that vanished are dropped

// The feed a media-configure handler attaches the media's appsrc to, and the server's record
// of the attachments.
struct MountData {
  std::weak_ptr<ViewFeed> feed;
  std::shared_ptr<RtspAttachments> attachments;
};

// What an unprepared handler detaches.
struct Unprepared {
  std::shared_ptr<RtspAttachments> attachments;
  GstElement* appsrc = nullptr;  // not referenced: only compared
};

void on_unprepared(GstRTSPMedia*, gpointer data) {
  const auto* u = static_cast<Unprepared*>(data);
  u->attachments->remove(u->appsrc, false);
}

// A new shared media (the first client of a mount): its appsrc joins the view's feed.
void on_media_configure(GstRTSPMediaFactory*, GstRTSPMedia* media, gpointer data) {
  const auto* mount = static_cast<MountData*>(data);
  const auto feed = mount->feed.lock();
  if (!feed) return;
  GstElement* element = gst_rtsp_media_get_element(media);
  GstElement* appsrc = gst_bin_get_by_name_recurse_up(GST_BIN(element), "frames");
  gst_object_unref(element);
  if (appsrc == nullptr) return;
  mount->attachments->add(feed, appsrc);
  g_signal_connect_data(
      media, "unprepared", G_CALLBACK(on_unprepared), new Unprepared{mount->attachments, appsrc},
      [](gpointer d, GClosure*) { delete static_cast<Unprepared*>(d); },
      static_cast<GConnectFlags>(0));
  gst_object_unref(appsrc);  // the attachment holds its own reference
}

// A client starts to play: the encoder makes a key frame now, so the picture starts at once.
void on_play_request(GstRTSPClient*, GstRTSPContext* ctx, gpointer) {
  if (ctx == nullptr || ctx->media == nullptr) return;
  GstElement* element = gst_rtsp_media_get_element(ctx->media);
  if (GstElement* pay = gst_bin_get_by_name(GST_BIN(element), "pay0")) {
    gst_element_send_event(
        pay, gst_video_event_new_upstream_force_key_unit(GST_CLOCK_TIME_NONE, TRUE, 0));
    gst_object_unref(pay);
  }
  gst_object_unref(element);
}

struct ClientData {
  std::shared_ptr<void> counters;  // keeps the counters alive
  std::atomic<int>* clients = nullptr;
};

void on_client_closed(GstRTSPClient*, gpointer data) {
  static_cast<ClientData*>(data)->clients->fetch_sub(1);
}

gboolean cleanup_sessions(gpointer server) {
  GstRTSPSessionPool* pool = gst_rtsp_server_get_session_pool(GST_RTSP_SERVER(server));
  gst_rtsp_session_pool_cleanup(pool);
  g_object_unref(pool);
  return G_SOURCE_CONTINUE;
}

GstRTSPFilterResult remove_client(GstRTSPServer*, GstRTSPClient*, gpointer) {
  return GST_RTSP_FILTER_REMOVE;
}

}  // namespace

// ---- RtspAttachments -----------------------------------------------------------------------

void RtspAttachments::add(const std::shared_ptr<ViewFeed>& feed, GstElement* appsrc) {
  std::lock_guard lock(mutex_);
  feed->attach(appsrc);
  list_.push_back({feed, GST_ELEMENT(gst_object_ref(appsrc))});
}

void RtspAttachments::remove(GstElement* appsrc, bool end) {
  std::lock_guard lock(mutex_);
  std::erase_if(list_, [&](Entry& e) {
    if (e.appsrc != appsrc) return false;
    release(e, end);
    return true;
  });
}

void RtspAttachments::end(const ViewFeed* feed) {
  std::lock_guard lock(mutex_);
  std::erase_if(list_, [&](Entry& e) {
    const auto f = e.feed.lock();
    if (feed != nullptr && f.get() != feed) return false;
    release(e, true);
    return true;
  });
}

void RtspAttachments::release(Entry& e, bool end) {
  if (const auto feed = e.feed.lock()) feed->detach(e.appsrc);
  if (end) gst_app_src_end_of_stream(GST_APP_SRC(e.appsrc));
  gst_object_unref(e.appsrc);
}

// ---- RtspServer ----------------------------------------------------------------------------

void RtspServer::on_client_connected(GstRTSPServer*, GstRTSPClient* client, gpointer self) {
  auto* server = static_cast<RtspServer*>(self);
  server->counters_->clients.fetch_add(1);
  server->counters_->connections.fetch_add(1);
  auto* data = new ClientData{server->counters_, &server->counters_->clients};
  g_signal_connect_data(
      client, "closed", G_CALLBACK(on_client_closed), data,
      [](gpointer d, GClosure*) { delete static_cast<ClientData*>(d); },
      static_cast<GConnectFlags>(0));
  g_signal_connect(client, "play-request", G_CALLBACK(on_play_request), nullptr);
}

RtspServer::RtspServer(const RtspConfig& config, std::string encoder_launch)
    : config_(config),
      launch_(
          "( appsrc name=frames is-live=true format=time max-buffers=2 "
          "leaky-type=downstream block=false ! videoconvert ! video/x-raw,format=I420 ! " +
          std::move(encoder_launch) + " ! rtph264pay name=pay0 pt=96 config-interval=-1 )") {
  server_ = gst_rtsp_server_new();
  gst_rtsp_server_set_address(server_, config_.address.c_str());
  gst_rtsp_server_set_service(server_, std::to_string(config_.port).c_str());
  if (!config_.username.empty()) {
    GstRTSPAuth* auth = gst_rtsp_auth_new();
    GstRTSPToken* token =
        gst_rtsp_token_new(GST_RTSP_TOKEN_MEDIA_FACTORY_ROLE, G_TYPE_STRING, kViewerRole, nullptr);
    gchar* basic = gst_rtsp_auth_make_basic(config_.username.c_str(), config_.password.c_str());
    gst_rtsp_auth_add_basic(auth, basic, token);
    g_free(basic);
    gst_rtsp_token_unref(token);
    gst_rtsp_server_set_auth(server_, auth);
    g_object_unref(auth);
  }
  g_signal_connect(server_, "client-connected", G_CALLBACK(&RtspServer::on_client_connected), this);

  context_ = g_main_context_new();
  GError* error = nullptr;
  listen_source_ = gst_rtsp_server_create_source(server_, nullptr, &error);
  if (listen_source_ == nullptr) {
    const std::string why = error != nullptr ? error->message : "unknown";
    g_clear_error(&error);
    g_object_unref(server_);
    g_main_context_unref(context_);
    throw Error("rtsp: cannot listen on " + config_.address + ":" + std::to_string(config_.port) +
                    ": " + why,
                "a free port and an address of this host (rtsp.address, rtsp.port)");
  }
  g_source_attach(listen_source_, context_);
  port_ = gst_rtsp_server_get_bound_port(server_);
  cleanup_source_ = g_timeout_source_new_seconds(kSessionCleanupS);
  g_source_set_callback(cleanup_source_, cleanup_sessions, server_, nullptr);
  g_source_attach(cleanup_source_, context_);
  loop_ = g_main_loop_new(context_, FALSE);
  thread_ = std::thread([this] {
    g_main_context_push_thread_default(context_);
    g_main_loop_run(loop_);
    g_main_context_pop_thread_default(context_);
  });
}

RtspServer::~RtspServer() {
  gst_rtsp_server_client_filter(server_, remove_client, nullptr);
  // The feeds go on (other outputs may take them); this server's medias let go of them.
  attachments_->end(nullptr);
  g_main_loop_quit(loop_);
  if (thread_.joinable()) thread_.join();
  g_source_destroy(cleanup_source_);
  g_source_unref(cleanup_source_);
  g_source_destroy(listen_source_);
  g_source_unref(listen_source_);
  g_main_loop_unref(loop_);
  g_object_unref(server_);
  g_main_context_unref(context_);
}

std::string RtspServer::path(const std::string& pipeline, StreamView view) {
  return "/" + pipeline + "/" + std::string(to_string(view));
}

std::string RtspServer::url(const std::string& pipeline, StreamView view) const {
  const bool v6 = config_.address.find(':') != std::string::npos;
  const std::string host = v6 ? "[" + config_.address + "]" : config_.address;
  return "rtsp://" + host + ":" + std::to_string(port_) + path(pipeline, view);
}

void RtspServer::add_mount(const std::string& mount_path, const std::shared_ptr<ViewFeed>& feed) {
  GstRTSPMediaFactory* factory = gst_rtsp_media_factory_new();
  gst_rtsp_media_factory_set_launch(factory, launch_.c_str());
  gst_rtsp_media_factory_set_shared(factory, TRUE);
  if (!config_.username.empty()) {
    gst_rtsp_media_factory_add_role(factory, kViewerRole, GST_RTSP_PERM_MEDIA_FACTORY_ACCESS,
                                    G_TYPE_BOOLEAN, TRUE, GST_RTSP_PERM_MEDIA_FACTORY_CONSTRUCT,
                                    G_TYPE_BOOLEAN, TRUE, nullptr);
  }
  g_signal_connect_data(
      factory, "media-configure", G_CALLBACK(on_media_configure), new MountData{feed, attachments_},
      [](gpointer d, GClosure*) { delete static_cast<MountData*>(d); },
      static_cast<GConnectFlags>(0));
  GstRTSPMountPoints* mounts = gst_rtsp_server_get_mount_points(server_);
  gst_rtsp_mount_points_add_factory(mounts, mount_path.c_str(), factory);
  g_object_unref(mounts);
}

void RtspServer::remove_mount(const std::string& mount_path) {
  GstRTSPMountPoints* mounts = gst_rtsp_server_get_mount_points(server_);
  gst_rtsp_mount_points_remove_factory(mounts, mount_path.c_str());
  g_object_unref(mounts);
}

void RtspServer::mount(const std::string& pipeline, const ViewFeeds& feeds,
                       const std::vector<StreamView>& views) {
  std::lock_guard lock(mutex_);
  for (int v = 0; v < kStreamViews; ++v) {
    const auto view = static_cast<StreamView>(v);
    const std::string p = path(pipeline, view);
    const bool wanted = feeds[v] && std::find(views.begin(), views.end(), view) != views.end();
    const auto it = feeds_.find(p);
    if (it != feeds_.end() && (!wanted || it->second != feeds[v])) {
      remove_mount(p);
      attachments_->end(it->second.get());  // its clients get the end of the stream
      feeds_.erase(it);
    }
    if (wanted && feeds_.find(p) == feeds_.end()) {
      add_mount(p, feeds[v]);
      feeds_.emplace(p, feeds[v]);
      spdlog::info("{}: live view {} at {}", pipeline, to_string(view), url(pipeline, view));
    }
  }
}

void RtspServer::unmount(const std::string& pipeline) {
  mount(pipeline, ViewFeeds{}, {});
}

}  // namespace starsift::daemon
