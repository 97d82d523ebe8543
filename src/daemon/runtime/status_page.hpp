// SPDX-License-Identifier: LGPL-2.1-or-later
// The status page a person opens on the metrics port (docs/starsiftd.md, "The status page"):
// a snapshot of the daemon (DaemonSnapshot, metrics.hpp) as one HTML page and as the JSON its
// script polls. Pure: no I/O, no clock; metrics_server.cpp routes the requests to it.
//
// The page is whole without its script (a <noscript> meta refresh reloads it); with the
// script it fetches /status.json every 2 s and updates the page in place, and reloads a
// pipeline's preview picture only when a new one was written. Every text from the snapshot
// (names, faults, backends) is escaped in the HTML and set as text, never as markup, by the
// script. No external resource: the page works on a host without the internet.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "daemon/runtime/metrics.hpp"

namespace starsift::daemon {

// GET /: the page, rendered with the snapshot's values.
std::string status_html(const DaemonSnapshot& snapshot);

// GET /status.json: the same values, one JSON object (UTF-8; non-finite numbers as null).
std::string status_json(const DaemonSnapshot& snapshot);

// The URL of a pipeline's preview picture on this server: "/preview/<name>.png".
std::string preview_url(std::string_view pipeline);

// The pipeline a request path names as "/preview/<name>.png" (the name percent-decoded), or
// nothing when the path has another form. The caller still looks the name up among the
// snapshot's pipelines and serves only the file the daemon itself wrote for it.
std::optional<std::string> preview_request(std::string_view path);

// `text` with &, <, >, " and ' replaced by character references.
std::string html_escape(std::string_view text);

}  // namespace starsift::daemon
