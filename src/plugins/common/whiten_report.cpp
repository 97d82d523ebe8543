// SPDX-License-Identifier: LGPL-2.1-or-later
#include "plugins/common/whiten_report.hpp"

namespace starsift::gst {

bool WhitenReport::operator==(const WhitenReport& other) const noexcept {
  const WhitenStats& a = stats;
  const WhitenStats& b = other.stats;
  return a.frame == b.frame && a.history_used == b.history_used && a.warmup == b.warmup &&
         a.refit == b.refit && a.weight_sq_sum == b.weight_sq_sum &&
         a.noise_floor == b.noise_floor && a.gamma == b.gamma && a.shift_x == b.shift_x &&
         a.shift_y == b.shift_y && a.shift_peak == b.shift_peak &&
         a.reference_changed == b.reference_changed && a.shift_rejected == b.shift_rejected &&
         a.rejected == b.rejected && a.despiked == b.despiked && frames == other.frames &&
         timestamp == other.timestamp;
}

GstStructure* whiten_report_to_structure(const WhitenReport& report, const char* name) {
  const WhitenStats& s = report.stats;
  return gst_structure_new(
      name, "frame", G_TYPE_UINT64, static_cast<guint64>(s.frame), "history-used", G_TYPE_INT,
      s.history_used, "warmup", G_TYPE_BOOLEAN, static_cast<gboolean>(s.warmup), "refit",
      G_TYPE_BOOLEAN, static_cast<gboolean>(s.refit), "sum-w2", G_TYPE_DOUBLE, s.weight_sq_sum,
      "noise-floor", G_TYPE_DOUBLE, s.noise_floor, "gamma", G_TYPE_DOUBLE, s.gamma, "shift-x",
      G_TYPE_DOUBLE, s.shift_x, "shift-y", G_TYPE_DOUBLE, s.shift_y, "shift-peak", G_TYPE_DOUBLE,
      s.shift_peak, "reference-changed", G_TYPE_BOOLEAN, static_cast<gboolean>(s.reference_changed),
      "shift-rejected", G_TYPE_BOOLEAN, static_cast<gboolean>(s.shift_rejected), "rejected",
      G_TYPE_UINT64, static_cast<guint64>(s.rejected), "despiked", G_TYPE_UINT64,
      static_cast<guint64>(s.despiked), "frames", G_TYPE_UINT64,
      static_cast<guint64>(report.frames), "timestamp", G_TYPE_UINT64,
      static_cast<guint64>(report.timestamp), nullptr);
}

std::optional<WhitenReport> whiten_report_from_structure(const GstStructure* structure) {
  if (structure == nullptr) return std::nullopt;
  guint64 frame = 0, rejected = 0, despiked = 0, frames = 0, timestamp = 0;
  gint history_used = 0;
  gboolean warmup = FALSE, refit = FALSE, reference_changed = FALSE, shift_rejected = FALSE;
  WhitenReport report;
  WhitenStats& s = report.stats;
  if (!gst_structure_get(
          structure, "frame", G_TYPE_UINT64, &frame, "history-used", G_TYPE_INT, &history_used,
          "warmup", G_TYPE_BOOLEAN, &warmup, "refit", G_TYPE_BOOLEAN, &refit, "sum-w2",
          G_TYPE_DOUBLE, &s.weight_sq_sum, "noise-floor", G_TYPE_DOUBLE, &s.noise_floor, "gamma",
          G_TYPE_DOUBLE, &s.gamma, "shift-x", G_TYPE_DOUBLE, &s.shift_x, "shift-y", G_TYPE_DOUBLE,
          &s.shift_y, "shift-peak", G_TYPE_DOUBLE, &s.shift_peak, "reference-changed",
          G_TYPE_BOOLEAN, &reference_changed, "shift-rejected", G_TYPE_BOOLEAN, &shift_rejected,
          "rejected", G_TYPE_UINT64, &rejected, "despiked", G_TYPE_UINT64, &despiked, "frames",
          G_TYPE_UINT64, &frames, "timestamp", G_TYPE_UINT64, &timestamp, nullptr)) {
    return std::nullopt;
  }
  s.frame = frame;
  s.history_used = history_used;
  s.warmup = warmup != FALSE;
  s.refit = refit != FALSE;
  s.reference_changed = reference_changed != FALSE;
  s.shift_rejected = shift_rejected != FALSE;
  s.rejected = rejected;
  s.despiked = despiked;
  report.frames = frames;
  report.timestamp = timestamp;
  return report;
}

}  // namespace starsift::gst
