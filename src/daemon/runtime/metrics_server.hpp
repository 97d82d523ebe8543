// SPDX-License-Identifier: LGPL-2.1-or-later
// /metrics, /healthz and the status page (/, /status.json, /preview/<pipeline>.png;
// status_page.hpp) over HTTP/1.0 on metrics.address:port (127.0.0.1:9464 by default).
//
// prometheus-cpp's own server (prometheus-cpp-pull's Exposer, civetweb) answers only with
// metrics, always 200; /healthz must answer 503 when a pipeline is down, so the pages are
// served here by GIO's GThreadedSocketService (GLib, which the daemon runs on already): each
// connection on a thread of a small pool, never on the main loop, with a bounded request
// size and a read timeout so a slow client holds nothing. The metrics text itself is
// prometheus-cpp's (metrics.hpp).
#pragma once

#include <gio/gio.h>

#include <functional>
#include <mutex>
#include <string>

#include "daemon/runtime/metrics.hpp"

namespace starsift::daemon {

class MetricsServer {
 public:
  // Listens on `address`:`port` (an IPv4 or IPv6 literal). Throws Error naming the address
  // and the reason when it cannot (a port in use, an address not of this host).
  MetricsServer(const std::string& address, int port);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // The values served from now on (the main loop sets them a few times a second).
  void publish(DaemonSnapshot snapshot);
  int port() const noexcept { return port_; }  // the bound port (useful with port 0)

 private:
  static gboolean on_connection(GThreadedSocketService* service, GSocketConnection* connection,
                                GObject* source, gpointer self);
  void serve(GSocketConnection* connection);

  GSocketService* service_ = nullptr;
  int port_ = 0;
  std::mutex mutex_;
  DaemonSnapshot snapshot_;
};

}  // namespace starsift::daemon
