// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/runtime/status_page.hpp"

#include <cmath>
#include <cstdio>

#include "daemon/outputs/json_text.hpp"
#include "pipeline/detect/detections_json.hpp"

namespace starsift::daemon {

namespace {

// ---- values as text: the script below formats them the same way -------------------------

const char* const kDash = "\u2013";  // a value not known (yet)

std::string fixed(double v, int decimals) {
  if (!std::isfinite(v)) return kDash;
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, v);
  return buffer;
}

std::string count(std::uint64_t v) {
  return std::to_string(v);
}

// "3 d 04:05:06", "04:05:06".
std::string duration_text(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return kDash;
  const auto s = static_cast<long long>(seconds);
  char buffer[64];
  if (s >= 86400) {
    std::snprintf(buffer, sizeof buffer, "%lld d %02lld:%02lld:%02lld", s / 86400, s % 86400 / 3600,
                  s % 3600 / 60, s % 60);
  } else {
    std::snprintf(buffer, sizeof buffer, "%02lld:%02lld:%02lld", s / 3600, s % 3600 / 60, s % 60);
  }
  return buffer;
}

// "412 µs", "3.2 ms", "16.0 s".
std::string error_text(std::int64_t us) {
  if (us < 1000) return std::to_string(us) + " \u00b5s";
  if (us < 1'000'000) return fixed(static_cast<double>(us) * 1e-3, 1) + " ms";
  return fixed(static_cast<double>(us) * 1e-6, 1) + " s";
}

std::string clock_text(const ClockState& c) {
  if (!c.readable) return "unknown: " + c.error;
  std::string text = c.synchronised ? "synchronised" : "not synchronised";
  if (!c.source.empty()) text += " (" + c.source + ")";
  if (c.est_error_us >= 0) text += ", error \u00b1" + error_text(c.est_error_us);
  return text;
}

std::string mqtt_text(const PipelineSnapshot& p) {
  return std::string(p.mqtt_connected ? "connected" : "not connected") + ", " +
         count(p.mqtt_published) + " published, " + count(p.mqtt_queued) + " queued, " +
         count(p.mqtt_dropped) + " dropped, " + count(p.mqtt_failed) + " failed";
}

// ---- JSON ---------------------------------------------------------------------------------

void put_number(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.9g", v);
  out += buffer;
}

void put_key(std::string& out, const char* key) {
  out += '"';
  out += key;
  out += "\":";
}

void put(std::string& out, const char* key, std::uint64_t v) {
  put_key(out, key);
  out += std::to_string(v);
  out += ',';
}

void put(std::string& out, const char* key, double v) {
  put_key(out, key);
  put_number(out, v);
  out += ',';
}

void put(std::string& out, const char* key, bool v) {
  put_key(out, key);
  out += v ? "true," : "false,";
}

void put(std::string& out, const char* key, std::string_view v) {
  put_key(out, key);
  append_json_string(out, v);
  out += ',';
}

void end_object(std::string& out) {
  if (out.back() == ',') out.pop_back();
  out += '}';
}

void append_mover_json(std::string& out, const MoverReport& m) {
  out += "{\"track\":" + std::to_string(m.track) + ',';
  put(out, "frame", m.frame);
  put(out, "utc", std::string_view(utc_text(m.utc_us)));
  put(out, "x", static_cast<double>(m.x));
  put(out, "y", static_cast<double>(m.y));
  put(out, "vx", static_cast<double>(m.vx));
  put(out, "vy", static_cast<double>(m.vy));
  put(out, "vx_s", static_cast<double>(m.vx_s));
  put(out, "vy_s", static_cast<double>(m.vy_s));
  put(out, "flux", static_cast<double>(m.flux));
  put(out, "detections", static_cast<std::uint64_t>(m.detections));
  end_object(out);
}

void append_pipeline_json(std::string& out, const PipelineSnapshot& p) {
  out += '{';
  put(out, "name", std::string_view(p.name));
  put(out, "state", std::string_view(p.state));
  put(out, "flowing", p.flowing);
  put(out, "backend", std::string_view(p.backend));
  put(out, "fault", std::string_view(p.fault));
  put(out, "fps", p.fps);
  put(out, "latency_s", p.latency_s);
  put(out, "frames_in", p.frames_in);
  put(out, "frames_out", p.frames_out);
  put(out, "dropped", p.dropped);
  put(out, "overrun", p.overrun);
  put(out, "detections", p.detections);
  put(out, "mover_reports", p.mover_reports);
  put(out, "objects", static_cast<std::uint64_t>(p.objects));
  put(out, "movers", static_cast<std::uint64_t>(p.movers));
  put(out, "restarts", p.restarts);
  put(out, "rebuilds", p.rebuilds);
  put(out, "live_updates", p.live_updates);
  put(out, "backend_fallbacks", p.backend_fallbacks);
  put(out, "json_lines", p.json_lines);
  put(out, "fits_files", p.fits_files);
  put(out, "previews", p.previews);
  put_key(out, "preview");
  if (p.preview.empty()) {
    out += "null,";
  } else {
    append_json_string(out, preview_url(p.name));
    out += ',';
  }
  put_key(out, "mqtt");
  if (p.mqtt) {
    out += '{';
    put(out, "connected", p.mqtt_connected);
    put(out, "published", p.mqtt_published);
    put(out, "queued", p.mqtt_queued);
    put(out, "dropped", p.mqtt_dropped);
    put(out, "failed", p.mqtt_failed);
    put(out, "connections", p.mqtt_connections);
    end_object(out);
    out += ',';
  } else {
    out += "null,";
  }
  put_key(out, "recent_movers");
  out += '[';
  // Newest first, as the page lists them.
  for (auto it = p.recent_movers.rbegin(); it != p.recent_movers.rend(); ++it) {
    if (it != p.recent_movers.rbegin()) out += ',';
    append_mover_json(out, *it);
  }
  out += "]}";
}

// ---- HTML ---------------------------------------------------------------------------------

constexpr const char* kStyle = R"css(
:root{color-scheme:dark;--bg:#101418;--panel:#1a2027;--line:#2c353f;--text:#d8dee6;--dim:#8b96a3;
--good:#2e7d32;--warn:#a66b00;--bad:#b3261e}
*{box-sizing:border-box}
body{margin:0;padding:1rem 1.5rem;background:var(--bg);color:var(--text);
font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
header{display:flex;flex-wrap:wrap;align-items:baseline;gap:.5rem 1.5rem;margin-bottom:1rem}
h1{font-size:1.4rem;margin:0}
header span{color:var(--dim)} header b{color:var(--text);font-weight:600}
#updated{margin-left:auto;font-size:.85rem}
body.stale #updated{color:#ff8a80}
section.pipe{background:var(--panel);border:1px solid var(--line);border-radius:6px;
padding:.8rem 1rem;margin-bottom:1rem}
h2{font-size:1.15rem;margin:0 0 .6rem;display:flex;gap:.6rem;align-items:center}
.state{font-size:.8rem;padding:.1rem .5rem;border-radius:1rem;background:var(--bad);color:#fff}
.state[data-state="running"]{background:var(--good)}
.state[data-state="starting"],.state[data-state="waiting to restart"],
.state[data-state="stopping"]{background:var(--warn)}
.state[data-state="stopped"]{background:#555}
.backend{color:var(--dim);font-size:.85rem;font-weight:400}
.fault{color:#ff8a80;margin:.2rem 0 .6rem;white-space:pre-wrap;word-break:break-word}
.cols{display:flex;flex-wrap:wrap;gap:1rem;align-items:flex-start}
table{border-collapse:collapse}
table.nums th{text-align:left;color:var(--dim);font-weight:400;padding:.1rem 1rem .1rem 0}
table.nums td{font-variant-numeric:tabular-nums;padding:.1rem 0}
figure{margin:0;flex:1 1 30rem;min-width:18rem}
figure img{display:block;max-width:100%;height:auto;border:1px solid var(--line);
background:#000}
figcaption,.none{color:var(--dim);font-size:.85rem}
table.movers{margin-top:.8rem;width:100%;font-variant-numeric:tabular-nums}
table.movers th,table.movers td{padding:.15rem .6rem;border-bottom:1px solid var(--line);
text-align:right;white-space:nowrap}
table.movers th{color:var(--dim);font-weight:400}
table.movers th:nth-child(2),table.movers td:nth-child(2){text-align:left}
[hidden]{display:none!important}
)css";

// The script: polls /status.json and writes the values where the page has them (data-k),
// as text only. Formats as the C++ above does.
constexpr const char* kScript = R"js(
(function () {
  'use strict';
  var DASH = '\u2013';
  var body = document.body, main = document.getElementById('pipelines');
  var template = document.getElementById('pipe-template');
  var sections = new Map();
  main.querySelectorAll('section.pipe').forEach(function (s) { sections.set(s.dataset.name, s); });
  function q(root, k) { return root.querySelector('[data-k="' + k + '"]'); }
  function set(root, k, v) {
    var e = q(root, k);
    if (e && e.textContent !== String(v)) e.textContent = v;
  }
  function fixed(v, d) { return (typeof v === 'number' && isFinite(v)) ? v.toFixed(d) : DASH; }
  function pad(n) { return (n < 10 ? '0' : '') + n; }
  function duration(s) {
    if (typeof s !== 'number' || !isFinite(s) || s < 0) return DASH;
    s = Math.floor(s);
    var t = pad(Math.floor(s % 86400 / 3600)) + ':' + pad(Math.floor(s % 3600 / 60)) + ':' + pad(s % 60);
    return s >= 86400 ? Math.floor(s / 86400) + ' d ' + t : t;
  }
  function errorText(us) {
    if (us < 1000) return us + ' \u00b5s';
    return us < 1e6 ? fixed(us * 1e-3, 1) + ' ms' : fixed(us * 1e-6, 1) + ' s';
  }
  function clockText(c) {
    if (!c) return DASH;
    if ('error' in c) return 'unknown: ' + c.error;
    var t = c.synchronised ? 'synchronised' : 'not synchronised';
    if (c.source) t += ' (' + c.source + ')';
    if (typeof c.est_error_us === 'number' && c.est_error_us >= 0) t += ', error \u00b1' + errorText(c.est_error_us);
    return t;
  }
  function mqttText(m) {
    return (m.connected ? 'connected' : 'not connected') + ', ' + m.published + ' published, ' +
      m.queued + ' queued, ' + m.dropped + ' dropped, ' + m.failed + ' failed';
  }
  function cell(row, text) { var td = document.createElement('td'); td.textContent = text; row.appendChild(td); }
  function moverRows(tbody, movers) {
    var rows = document.createDocumentFragment();
    movers.forEach(function (m) {
      var tr = document.createElement('tr');
      cell(tr, m.track); cell(tr, m.utc); cell(tr, m.frame); cell(tr, fixed(m.x, 1)); cell(tr, fixed(m.y, 1));
      cell(tr, fixed(m.vx, 2)); cell(tr, fixed(m.vy, 2));
      cell(tr, fixed(Math.sqrt(m.vx_s * m.vx_s + m.vy_s * m.vy_s), 1)); cell(tr, fixed(m.flux, 0));
      cell(tr, m.detections);
      rows.appendChild(tr);
    });
    if (movers.length === 0) {
      var tr = document.createElement('tr'), td = document.createElement('td');
      td.colSpan = 10; td.className = 'none'; td.textContent = 'no movers reported yet';
      tr.appendChild(td); rows.appendChild(tr);
    }
    tbody.replaceChildren(rows);
  }
  function fill(sec, p) {
    set(sec, 'name', p.name);
    var state = q(sec, 'state');
    state.textContent = p.state; state.dataset.state = p.state;
    set(sec, 'backend', p.backend || '');
    var fault = q(sec, 'fault');
    fault.textContent = p.fault; fault.hidden = !p.fault;
    set(sec, 'fps', fixed(p.fps, 2));
    set(sec, 'latency', fixed(p.latency_s, 3) + ' s');
    ['frames_in', 'frames_out', 'dropped', 'overrun', 'detections', 'mover_reports', 'objects',
     'movers', 'restarts'].forEach(function (k) { set(sec, k, p[k]); });
    q(sec, 'mqtt_row').hidden = !p.mqtt;
    if (p.mqtt) set(sec, 'mqtt', mqttText(p.mqtt));
    var img = q(sec, 'preview'), none = q(sec, 'no_preview');
    img.alt = 'preview of ' + p.name;
    if (p.preview) {
      var url = p.preview + '?n=' + p.previews;
      if (img.getAttribute('src') !== url) img.setAttribute('src', url);
    }
    img.hidden = !p.preview; none.hidden = !!p.preview;
    moverRows(q(sec, 'movers_rows'), p.recent_movers || []);
  }
  function render(s) {
    set(document, 'uptime', duration(s.uptime_s));
    set(document, 'ready', s.stopping ? 'stopping' : (s.ready ? 'yes' : 'not yet'));
    set(document, 'reloads', s.reloads);
    set(document, 'reload_failures', s.reload_failures);
    set(document, 'clock', clockText(s.clock));
    var seen = new Set();
    s.pipelines.forEach(function (p, i) {
      var sec = sections.get(p.name);
      if (!sec) {
        sec = template.content.firstElementChild.cloneNode(true);
        sec.dataset.name = p.name;
        sections.set(p.name, sec);
      }
      if (main.children[i] !== sec) main.insertBefore(sec, main.children[i] || null);
      fill(sec, p);
      seen.add(p.name);
    });
    sections.forEach(function (sec, name) {
      if (!seen.has(name)) { sec.remove(); sections.delete(name); }
    });
    q(document, 'no_pipelines').hidden = s.pipelines.length > 0;
  }
  var updated = document.getElementById('updated');
  function poll() {
    fetch('/status.json', { cache: 'no-store' })
      .then(function (r) { if (!r.ok) throw new Error('HTTP ' + r.status); return r.json(); })
      .then(function (s) {
        render(s);
        body.dataset.refreshes = (Number(body.dataset.refreshes) || 0) + 1;
        body.classList.remove('stale');
        updated.textContent = 'updated ' + new Date().toISOString().slice(11, 19) + ' UTC';
      })
      .catch(function (e) {
        body.classList.add('stale');
        updated.textContent = 'starsiftd does not answer (' + e.message + ')';
      })
      .finally(function () { setTimeout(poll, 2000); });
  }
  poll();
})();
)js";

void row(std::string& out, const char* label, const std::string& cells) {
  out += "<tr><th>";
  out += label;
  out += "</th><td>" + cells + "</td></tr>\n";
}

std::string value(const char* key, const std::string& text) {
  return std::string("<span data-k=\"") + key + "\">" + html_escape(text) + "</span>";
}

// One pipeline's section; without a pipeline, the empty one the script clones for a
// pipeline a reload adds.
void append_section(std::string& out, const PipelineSnapshot* pipeline) {
  const PipelineSnapshot empty;
  const PipelineSnapshot& p = pipeline != nullptr ? *pipeline : empty;
  const bool filled = pipeline != nullptr;
  const auto num = [&](std::uint64_t v) { return filled ? count(v) : std::string(kDash); };
  out += "<section class=\"pipe\"";
  if (filled) out += " data-name=\"" + html_escape(p.name) + "\"";
  out += ">\n<h2>" + value("name", p.name) +
         " <span class=\"state\" data-k=\"state\" data-state=\"" + html_escape(p.state) + "\">" +
         html_escape(p.state) + "</span> <span class=\"backend\" " + "data-k=\"backend\">" +
         html_escape(p.backend) + "</span></h2>\n";
  out += "<p class=\"fault\" data-k=\"fault\"";
  if (p.fault.empty()) out += " hidden";
  out += ">" + html_escape(p.fault) + "</p>\n";
  out += "<div class=\"cols\">\n<table class=\"nums\"><tbody>\n";
  row(out, "frame rate", value("fps", filled ? fixed(p.fps, 2) : kDash) + " fps");
  row(out, "frames in / out",
      value("frames_in", num(p.frames_in)) + " / " + value("frames_out", num(p.frames_out)));
  row(out, "dropped / overrun",
      value("dropped", num(p.dropped)) + " / " + value("overrun", num(p.overrun)));
  row(out, "latency", value("latency", (filled ? fixed(p.latency_s, 3) : kDash) + " s"));
  row(out, "detections",
      value("detections", num(p.detections)) + " objects, " +
          value("mover_reports", num(p.mover_reports)) + " mover reports");
  row(out, "latest frame",
      value("objects", num(p.objects)) + " objects, " + value("movers", num(p.movers)) + " movers");
  row(out, "restarts", value("restarts", num(p.restarts)));
  out += "<tr data-k=\"mqtt_row\"";
  if (!p.mqtt) out += " hidden";
  out += "><th>MQTT</th><td>" + value("mqtt", p.mqtt ? mqtt_text(p) : "") + "</td></tr>\n";
  out += "</tbody></table>\n<figure>\n<img data-k=\"preview\" alt=\"preview of " +
         html_escape(p.name) + "\"";
  if (p.preview.empty()) {
    out += " hidden";
  } else {
    out += " src=\"" + html_escape(preview_url(p.name)) + "?n=" + count(p.previews) + "\"";
  }
  out += ">\n<p class=\"none\" data-k=\"no_preview\"";
  if (!p.preview.empty()) out += " hidden";
  out +=
      ">no preview yet (outputs.preview.every-s)</p>\n"
      "<figcaption>raw | whitened | detections</figcaption>\n</figure>\n</div>\n"
      "<table class=\"movers\"><thead><tr><th>track</th><th>UTC</th><th>frame</th><th>x</th>"
      "<th>y</th><th>vx px/frame</th><th>vy px/frame</th><th>speed px/s</th><th>flux</th>"
      "<th>detections</th></tr></thead>\n<tbody data-k=\"movers_rows\">\n";
  for (auto it = p.recent_movers.rbegin(); it != p.recent_movers.rend(); ++it) {
    const MoverReport& m = *it;
    out += "<tr><td>" + std::to_string(m.track) + "</td><td>" + utc_text(m.utc_us) + "</td><td>" +
           count(m.frame) + "</td><td>" + fixed(m.x, 1) + "</td><td>" + fixed(m.y, 1) +
           "</td><td>" + fixed(m.vx, 2) + "</td><td>" + fixed(m.vy, 2) + "</td><td>" +
           fixed(std::hypot(static_cast<double>(m.vx_s), static_cast<double>(m.vy_s)), 1) +
           "</td><td>" + fixed(m.flux, 0) + "</td><td>" + std::to_string(m.detections) +
           "</td></tr>\n";
  }
  if (p.recent_movers.empty()) {
    out += "<tr><td colspan=\"10\" class=\"none\">no movers reported yet</td></tr>\n";
  }
  out += "</tbody></table>\n</section>\n";
}

}  // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string preview_url(std::string_view pipeline) {
  // Pipeline names are a-z, 0-9, '_' and '-' (config_loader.cpp): nothing to encode.
  return "/preview/" + std::string(pipeline) + ".png";
}

std::optional<std::string> preview_request(std::string_view path) {
  constexpr std::string_view prefix = "/preview/", suffix = ".png";
  if (path.size() <= prefix.size() + suffix.size() || !path.starts_with(prefix) ||
      !path.ends_with(suffix)) {
    return std::nullopt;
  }
  const std::string_view encoded =
      path.substr(prefix.size(), path.size() - prefix.size() - suffix.size());
  std::string name;
  for (std::size_t i = 0; i < encoded.size(); ++i) {
    if (encoded[i] != '%') {
      name += encoded[i];
      continue;
    }
    if (i + 2 >= encoded.size()) return std::nullopt;
    const auto hex = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    const int hi = hex(encoded[i + 1]), lo = hex(encoded[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    name += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  if (name.empty()) return std::nullopt;
  return name;
}

std::string status_json(const DaemonSnapshot& s) {
  std::string out = "{";
  put(out, "uptime_s", s.uptime_s);
  put(out, "ready", s.ready);
  put(out, "stopping", s.stopping);
  put(out, "reloads", s.reloads);
  put(out, "reload_failures", s.reload_failures);
  put_key(out, "clock");
  append_clock_json(out, s.clock);
  out += ",\"pipelines\":[";
  for (std::size_t i = 0; i < s.pipelines.size(); ++i) {
    if (i > 0) out += ',';
    append_pipeline_json(out, s.pipelines[i]);
  }
  out += "]}\n";
  return out;
}

std::string status_html(const DaemonSnapshot& s) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>starsiftd status</title>\n"
      // Without the script, the whole page again every 5 s.
      "<noscript><meta http-equiv=\"refresh\" content=\"5\"></noscript>\n<style>";
  out += kStyle;
  out += "</style>\n</head>\n<body data-refreshes=\"0\">\n<header>\n<h1>starsiftd</h1>\n";
  out += "<span>uptime <b data-k=\"uptime\">" + duration_text(s.uptime_s) + "</b></span>\n";
  out += "<span>ready <b data-k=\"ready\">" +
         std::string(s.stopping ? "stopping" : (s.ready ? "yes" : "not yet")) + "</b></span>\n";
  out += "<span>reloads <b data-k=\"reloads\">" + count(s.reloads) +
         "</b> (<b data-k=\"reload_failures\">" + count(s.reload_failures) +
         "</b> refused)</span>\n";
  out +=
      "<span>host clock <b data-k=\"clock\">" + html_escape(clock_text(s.clock)) + "</b></span>\n";
  out += "<span id=\"updated\"></span>\n</header>\n<main id=\"pipelines\">\n";
  for (const PipelineSnapshot& p : s.pipelines) append_section(out, &p);
  out += "</main>\n<p class=\"none\" data-k=\"no_pipelines\"";
  if (!s.pipelines.empty()) out += " hidden";
  out += ">no pipelines</p>\n<template id=\"pipe-template\">";
  append_section(out, nullptr);
  out += "</template>\n<script>";
  out += kScript;
  out += "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace starsift::daemon
