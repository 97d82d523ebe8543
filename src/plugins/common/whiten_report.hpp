// SPDX-License-Identifier: LGPL-2.1-or-later
// What siftwhiten reports about each frame it hands downstream, as a C++ type and as the
// GstStructure of its `stats` property ("siftwhiten-stats") and of its element messages
// ("siftwhiten"). Both structures carry the same fields; one table of names, here, writes and
// reads them.
#pragma once

#include <gst/gst.h>

#include <cstdint>
#include <optional>

#include "pipeline/whiten/stats.hpp"

namespace starsift::gst {

inline constexpr const char* kWhitenStatsName = "siftwhiten-stats";  // the `stats` property
inline constexpr const char* kWhitenMessageName = "siftwhiten";      // element messages

struct WhitenReport {
  WhitenStats stats;                             // the frame's, from the whitening stage
  std::uint64_t frames = 0;                      // frames handed downstream since start
  GstClockTime timestamp = GST_CLOCK_TIME_NONE;  // the frame's PTS (NONE when it had none)

  bool operator==(const WhitenReport& other) const noexcept;
};

// A new structure named `name` (kWhitenStatsName or kWhitenMessageName) with the fields:
//   frame (guint64), history-used (gint), warmup (gboolean), refit (gboolean),
//   sum-w2 (gdouble: WhitenStats::weight_sq_sum), noise-floor (gdouble), gamma (gdouble),
//   shift-x, shift-y, shift-peak (gdouble), reference-changed (gboolean),
//   shift-rejected (gboolean), rejected (guint64), despiked (guint64), frames (guint64),
//   timestamp (guint64, GstClockTime).
// GLib allocations only: callable under the object lock.
GstStructure* whiten_report_to_structure(const WhitenReport& report, const char* name);

// The report a structure of either name holds; nullopt when a field is missing or of another
// type.
std::optional<WhitenReport> whiten_report_from_structure(const GstStructure* structure);

}  // namespace starsift::gst
