// SPDX-License-Identifier: LGPL-2.1-or-later
#include "plugins/common/linked_detections.hpp"

#include <gst/video/video.h>

#include <algorithm>
#include <cstring>
#include <exception>

#include "pipeline/detect/catalogue.hpp"
#include "pipeline/detect/label_remap.hpp"
#include "pipeline/detect/overlay_draw.hpp"
#include "plugins/common/result_meta.hpp"
#include "plugins/common/video.hpp"

GST_DEBUG_CATEGORY_STATIC(linked_detections_debug);
#define GST_CAT_DEFAULT linked_detections_debug

namespace starsift::gst {

namespace {

// Interned once: the names every tracks meta carries (no string work per frame).
struct TracksNames {
  const gchar* stage = g_intern_static_string("tracker");
  const gchar* kind = g_intern_static_string("tracks");
  const gchar* catalogue = g_intern_static_string(kCatalogueKind.data());
};

const TracksNames& names() {
  static const TracksNames n;
  return n;
}

// The tracker keeps each track's last positions for the overlay's tails.
DetectLinkParams with_overlay_tail(DetectLinkParams link) {
  link.tracker.tail = kOverlayTail;
  return link;
}

void ensure_debug_category() {
  static const bool once = [] {
    GST_DEBUG_CATEGORY_INIT(linked_detections_debug, "siftlinked", 0,
                            "starsift catalogues after the merge and the tracker");
    return true;
  }();
  (void)once;
}

}  // namespace

LinkedDetections::LinkedDetections(const DetectParams& params)
    : linker(with_overlay_tail(params.link), static_cast<std::size_t>(params.max_objects)),
      max_objects(params.max_objects),
      tail(kOverlayTail) {}

bool LinkedDetections::fits(const DetectParams& params) const noexcept {
  return linker.params().tracker == with_overlay_tail(params.link).tracker &&
         max_objects == params.max_objects;
}

void LinkedDetections::publish(GstElement* element, GstBuffer* buffer, const FinishedFrame& frame,
                               const FrameResult& catalogue, const DetectLinkParams& link,
                               std::optional<DetectOutput> output) {
  ensure_debug_category();
  const std::uint32_t detected = std::min(catalogue.header().count, catalogue.layout.capacity);
  const GstClockTime pts = GST_BUFFER_PTS(buffer);
  try {
    linker.set_merge(link.merge_streaks, link.streak_merge);
    linker.link({catalogue.view.records<DetectedObject>(), detected},
                GST_CLOCK_TIME_IS_VALID(pts) ? static_cast<std::int64_t>(pts) : -1);
  } catch (const std::exception& e) {
    GST_WARNING_OBJECT(element, "tracking frame %" G_GUINT64_FORMAT ": %s", linker.frame(),
                       e.what());
  }
  edit_linked_frame(element, buffer, frame, output, linker, tail);
  attach_linked_results(buffer, catalogue, linker, tracks_area);
}

const FrameResult* frame_catalogue(const FinishedFrame& frame) noexcept {
  const FrameResult* catalogue = nullptr;
  for (const FrameResult& r : frame.results) {
    if (r.layout.kind == kCatalogueKind) catalogue = &r;
  }
  return catalogue;
}

void attach_linked_results(GstBuffer* buffer, const FrameResult& catalogue,
                           const DetectionLinker& linker, std::vector<std::byte>& tracks_area) {
  const std::span<const DetectedObject> records = linker.records();
  gpointer iter = nullptr;
  while (GstMeta* meta =
             gst_buffer_iterate_meta_filtered(buffer, &iter, GST_SIFT_RESULT_META_API_TYPE)) {
    auto* result = reinterpret_cast<GstSiftResultMeta*>(meta);
    if (result->stage != catalogue.stage || result->kind != names().catalogue) continue;
    // Never more than the meta holds: the merge only removes records.
    const auto count = static_cast<guint32>(std::min<std::size_t>(records.size(), result->count));
    result->count = count;
    if (count > 0) std::memcpy(result->records, records.data(), count * sizeof(DetectedObject));
  }
  const std::span<const Track> tracks = linker.tracks();
  tracks_area.resize(kResultRecordsOffset + tracks.size() * sizeof(Track));
  auto* header = reinterpret_cast<ResultHeader*>(tracks_area.data());
  header->count = static_cast<std::uint32_t>(tracks.size());
  header->overflow = 0;
  if (!tracks.empty()) {
    std::memcpy(tracks_area.data() + kResultRecordsOffset, tracks.data(),
                tracks.size() * sizeof(Track));
  }
  const ResultLayout layout{names().kind, sizeof(Track), static_cast<std::uint32_t>(tracks.size()),
                            false};
  add_result_meta(buffer, static_cast<unsigned>(catalogue.stage + 1), names().stage, names().kind,
                  layout, {tracks_area.data(), tracks_area.size()});
}

void edit_linked_frame(GstElement* element, GstBuffer* buffer, const FinishedFrame& frame,
                       std::optional<DetectOutput> output, const DetectionLinker& linker,
                       std::span<TrackPoint> tail) {
  ensure_debug_category();
  const bool remap = output == DetectOutput::Labels && linker.removed() > 0;
  const bool draw = output == DetectOutput::Overlay;
  if (!remap && !draw) return;
  const PixelFormat format = draw ? PixelFormat::Gray8 : PixelFormat::Gray16;
  const std::optional<GstVideoFormat> gst_format = gst_format_of(format);
  if (frame.output.format != format || !gst_format) {
    GST_WARNING_OBJECT(element, "the output frame is not the %s detection wrote: left as detected",
                       draw ? "overlay" : "labels");
    return;
  }
  if (!gst_buffer_is_writable(buffer)) {
    GST_WARNING_OBJECT(element, "the output buffer is shared: left as detected");
    return;
  }
  GstVideoInfo info;
  gst_video_info_set_format(&info, *gst_format, static_cast<guint>(frame.output.width),
                            static_cast<guint>(frame.output.height));
  const MappedFrame mapped(info, buffer, GST_MAP_READWRITE);
  if (!mapped.ok()) {
    GST_WARNING_OBJECT(element, "could not map the output buffer: left as detected");
    return;
  }
  const ImageView view = mapped.view(format);
  if (remap) {
    remap_labels(view, linker.new_ids(), static_cast<std::uint32_t>(linker.removed()));
  } else {
    draw_overlay(view, linker.records(), linker.tracker(), tail);
  }
}

}  // namespace starsift::gst
