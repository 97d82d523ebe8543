// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/runtime/metrics_server.hpp"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>
#include <optional>

#include "daemon/runtime/status_page.hpp"
#include "pipeline/error.hpp"

namespace starsift::daemon {

namespace {

constexpr int kThreads = 4;                // connections served at once
constexpr std::size_t kMaxRequest = 8192;  // bytes of request head read at most
constexpr guint kTimeoutS = 5;             // a client silent this long is dropped

// Every answer: its length, never cached (each is a snapshot of now), never sniffed as
// another type, and the connection closed after it. HEAD gets the head alone.
void respond(GOutputStream* out, bool head_only, const char* status, const char* type,
             const std::string& body, const char* extra_headers = "") {
  const std::string head = std::string("HTTP/1.0 ") + status + "\r\nContent-Type: " + type +
                           "\r\nContent-Length: " + std::to_string(body.size()) +
                           "\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n" +
                           extra_headers + "Connection: close\r\n\r\n";
  gsize written = 0;
  g_output_stream_write_all(out, head.data(), head.size(), &written, nullptr, nullptr);
  if (head_only) return;
  g_output_stream_write_all(out, body.data(), body.size(), &written, nullptr, nullptr);
}

// The status page runs its own inline script and style and loads only from this server.
constexpr const char* kPageHeaders =
    "Content-Security-Policy: default-src 'none'; script-src 'unsafe-inline'; "
    "style-src 'unsafe-inline'; img-src 'self'; connect-src 'self'\r\n";

constexpr std::uintmax_t kMaxPreviewBytes = 64u << 20;  // a preview PNG is a few MB at most

// The file's bytes, or nothing when it cannot be read (not written yet, removed meanwhile).
std::optional<std::string> read_small_file(const std::filesystem::path& path) {
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (error || size > kMaxPreviewBytes) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string bytes(static_cast<std::size_t>(size), '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  bytes.resize(static_cast<std::size_t>(in.gcount()));
  if (bytes.empty()) return std::nullopt;
  return bytes;
}

}  // namespace

MetricsServer::MetricsServer(const std::string& address, int port) {
  GInetAddress* inet = g_inet_address_new_from_string(address.c_str());
  if (inet == nullptr) {
    throw Error("metrics.address '" + address + "' is not an IP address",
                "an IPv4 or IPv6 literal such as 127.0.0.1 or ::1");
  }
  GSocketAddress* socket_address = g_inet_socket_address_new(inet, static_cast<guint16>(port));
  g_object_unref(inet);
  service_ = g_threaded_socket_service_new(kThreads);
  GSocketAddress* bound = nullptr;
  GError* error = nullptr;
  const gboolean ok = g_socket_listener_add_address(G_SOCKET_LISTENER(service_), socket_address,
                                                    G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP,
                                                    nullptr, &bound, &error);
  g_object_unref(socket_address);
  if (!ok) {
    const std::string reason = error != nullptr ? error->message : "unknown";
    g_clear_error(&error);
    g_object_unref(service_);
    service_ = nullptr;
    throw Error("metrics: cannot listen on " + address + ":" + std::to_string(port) + ": " + reason,
                "a free port on an address of this host (metrics.port 0 turns metrics off)");
  }
  port_ = g_inet_socket_address_get_port(G_INET_SOCKET_ADDRESS(bound));
  g_object_unref(bound);
  g_signal_connect(service_, "run", G_CALLBACK(&MetricsServer::on_connection), this);
  g_socket_service_start(service_);
}

MetricsServer::~MetricsServer() {
  if (service_ == nullptr) return;
  g_socket_service_stop(service_);
  g_socket_listener_close(G_SOCKET_LISTENER(service_));
  g_object_unref(service_);
}

void MetricsServer::publish(DaemonSnapshot snapshot) {
  const std::lock_guard lock(mutex_);
  snapshot_ = std::move(snapshot);
}

gboolean MetricsServer::on_connection(GThreadedSocketService*, GSocketConnection* connection,
                                      GObject*, gpointer self) {
  static_cast<MetricsServer*>(self)->serve(connection);
  return TRUE;
}

void MetricsServer::serve(GSocketConnection* connection) {
  GSocket* socket = g_socket_connection_get_socket(connection);
  g_socket_set_timeout(socket, kTimeoutS);
  GInputStream* in = g_io_stream_get_input_stream(G_IO_STREAM(connection));
  GOutputStream* out = g_io_stream_get_output_stream(G_IO_STREAM(connection));
  // The request line and headers, up to the blank line that ends them.
  std::string request;
  char buffer[1024];
  while (request.size() < kMaxRequest && request.find("\r\n\r\n") == std::string::npos &&
         request.find("\n\n") == std::string::npos) {
    const gssize n = g_input_stream_read(in, buffer, sizeof buffer, nullptr, nullptr);
    if (n <= 0) break;
    request.append(buffer, static_cast<std::size_t>(n));
  }
  const std::size_t end = request.find_first_of("\r\n");
  const std::string line = request.substr(0, end);
  std::string method, path;
  if (const auto sp = line.find(' '); sp != std::string::npos) {
    method = line.substr(0, sp);
    const auto sp2 = line.find(' ', sp + 1);
    path = line.substr(sp + 1, sp2 == std::string::npos ? std::string::npos : sp2 - sp - 1);
  }
  if (const auto q = path.find('?'); q != std::string::npos) path.resize(q);
  const bool head_only = method == "HEAD";
  if (method != "GET" && !head_only) {
    respond(out, false, "405 Method Not Allowed", "text/plain; charset=utf-8",
            "starsiftd answers GET (and HEAD) only\n", "Allow: GET, HEAD\r\n");
    return;
  }
  DaemonSnapshot snapshot;
  {
    const std::lock_guard lock(mutex_);
    snapshot = snapshot_;
  }
  if (path == "/metrics") {
    respond(out, head_only, "200 OK", "text/plain; version=0.0.4; charset=utf-8",
            metrics_text(snapshot));
  } else if (path == "/healthz") {
    std::string body;
    const bool ok = healthy(snapshot, &body);
    respond(out, head_only, ok ? "200 OK" : "503 Service Unavailable", "text/plain; charset=utf-8",
            body);
  } else if (path == "/" || path == "/index.html") {
    respond(out, head_only, "200 OK", "text/html; charset=utf-8", status_html(snapshot),
            kPageHeaders);
  } else if (path == "/status.json") {
    respond(out, head_only, "200 OK", "application/json", status_json(snapshot));
  } else if (const auto name = preview_request(path)) {
    // Only a pipeline of the snapshot, and only the file the daemon itself wrote for it: the
    // request names a pipeline, never a file.
    std::optional<std::string> png;
    for (const PipelineSnapshot& p : snapshot.pipelines) {
      if (p.name == *name && !p.preview.empty()) png = read_small_file(p.preview);
    }
    if (png) {
      respond(out, head_only, "200 OK", "image/png", *png);
    } else {
      respond(out, head_only, "404 Not Found", "text/plain; charset=utf-8",
              "no preview of that pipeline (not a pipeline, or none written yet)\n");
    }
  } else {
    respond(out, head_only, "404 Not Found", "text/plain; charset=utf-8",
            "starsiftd serves /, /status.json, /preview/<pipeline>.png, /metrics and /healthz\n");
  }
}

}  // namespace starsift::daemon
