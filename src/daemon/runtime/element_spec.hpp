// SPDX-License-Identifier: LGPL-2.1-or-later
// A GStreamer element as data: its factory, its name in the pipeline and its properties as
// gst-launch-1.0 writes them. The translation from config to pipeline produces these (pure,
// tested without GStreamer); the code that runs pipelines turns them into elements.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace starsift::daemon {

struct ElementSpec {
  std::string factory;  // "siftskysrc", or caps ("video/x-raw,format=GRAY8") for a capsfilter
  std::string name;     // unique within its pipeline; empty: GStreamer names it
  // In the order set; values as gst-launch-1.0 takes them (enum nicks, "true", "25/1").
  std::vector<std::pair<std::string, std::string>> properties;

  ElementSpec& set(std::string key, std::string value);
  // The value of `key`, when set.
  std::optional<std::string> property(std::string_view key) const;
  // A caps filter written bare, as gst-launch-1.0 allows ("video/x-raw,format=GRAY8").
  bool is_caps() const noexcept;

  bool operator==(const ElementSpec&) const = default;
};

// A caps filter: ElementSpec whose factory is the caps text.
ElementSpec caps_spec(std::string caps);

// `value` as one token of a gst-launch-1.0 description: as it is when it holds only
// characters the parser reads as part of a word, else double-quoted with '"' and '\'
// escaped.
std::string launch_quote(std::string_view value);

// The elements linked in order as a gst-launch-1.0 description:
// `siftskysrc name=sky seed=3 ! capsfilter caps=video/x-raw,format=GRAY16_LE ! ...`.
std::string launch_text(const std::vector<ElementSpec>& elements);

// A double as the shortest text that reads back as the same value ("0.0001", "25", "1e-05").
std::string number_text(double value);

}  // namespace starsift::daemon
