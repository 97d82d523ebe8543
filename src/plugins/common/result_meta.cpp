// SPDX-License-Identifier: LGPL-2.1-or-later
#include "plugins/common/result_meta.hpp"

#include <algorithm>
#include <cstring>

#include "plugins/common/meta_registry.hpp"

namespace {

constexpr const char* kApiName = "GstSiftResultMetaAPI";
constexpr const char* kImplementationName = "GstSiftResultMeta";

gboolean result_meta_init(GstMeta* meta, gpointer, GstBuffer*) {
  auto* m = reinterpret_cast<GstSiftResultMeta*>(meta);
  m->stage = 0;
  m->stage_name = nullptr;
  m->kind = nullptr;
  m->count = m->overflow = m->capacity = 0;
  m->record_bytes = 0;
  m->records = nullptr;
  return TRUE;
}

void result_meta_free(GstMeta* meta, GstBuffer*) {
  g_free(reinterpret_cast<GstSiftResultMeta*>(meta)->records);
}

// Sets `to` to a copy of `from`'s fields and records.
void copy_result(GstSiftResultMeta* to, const GstSiftResultMeta* from) {
  to->stage = from->stage;
  to->stage_name = from->stage_name;
  to->kind = from->kind;
  to->count = from->count;
  to->overflow = from->overflow;
  to->capacity = from->capacity;
  to->record_bytes = from->record_bytes;
  to->records = static_cast<guint8*>(g_memdup2(from->records, from->count * from->record_bytes));
}

// Whole copies keep the result; a region copy would not hold the frame it describes.
gboolean result_meta_transform(GstBuffer* dest, GstMeta* meta, GstBuffer*, GQuark type,
                               gpointer data) {
  if (!GST_META_TRANSFORM_IS_COPY(type)) return FALSE;
  const auto* copy = static_cast<const GstMetaTransformCopy*>(data);
  if (copy != nullptr && copy->region) return FALSE;
  auto* to = reinterpret_cast<GstSiftResultMeta*>(
      gst_buffer_add_meta(dest, GST_SIFT_RESULT_META_INFO, nullptr));
  if (to == nullptr) return FALSE;
  copy_result(to, reinterpret_cast<const GstSiftResultMeta*>(meta));
  return TRUE;
}

starsift::gst::BufferResult to_buffer_result(const GstSiftResultMeta* m) {
  starsift::gst::BufferResult r;
  r.stage = m->stage;
  r.stage_name = m->stage_name != nullptr ? m->stage_name : "";
  r.kind = m->kind != nullptr ? m->kind : "";
  r.count = m->count;
  r.overflow = m->overflow;
  r.capacity = m->capacity;
  r.record_bytes = m->record_bytes;
  r.records = reinterpret_cast<const std::byte*>(m->records);
  return r;
}

}  // namespace

GType gst_sift_result_meta_api_get_type(void) {
  static gsize type_id = 0;
  return starsift::gst::meta_api_type(&type_id, kApiName);
}

const GstMetaInfo* gst_sift_result_meta_get_info(void) {
  static const GstMetaInfo* info = nullptr;
  return starsift::gst::meta_info(&info, GST_SIFT_RESULT_META_API_TYPE, kImplementationName,
                                  sizeof(GstSiftResultMeta), result_meta_init, result_meta_free,
                                  result_meta_transform);
}

namespace starsift::gst {

GstSiftResultMeta* add_result_meta(GstBuffer* buffer, unsigned stage, const gchar* stage_name,
                                   const gchar* kind, const ResultLayout& layout,
                                   ConstResultView result) {
  auto* meta = reinterpret_cast<GstSiftResultMeta*>(
      gst_buffer_add_meta(buffer, GST_SIFT_RESULT_META_INFO, nullptr));
  if (meta == nullptr) return nullptr;
  const auto* header = reinterpret_cast<const ResultHeader*>(result.data);
  meta->stage = stage;
  meta->stage_name = stage_name;
  meta->kind = kind;
  // A stage never claims more than its capacity; the meta holds what the area can.
  meta->count = std::min(header->count, layout.capacity);
  meta->overflow = header->overflow;
  meta->capacity = layout.capacity;
  meta->record_bytes = layout.record_bytes;
  meta->records = static_cast<guint8*>(
      g_memdup2(result.data + kResultRecordsOffset, meta->count * layout.record_bytes));
  return meta;
}

std::vector<BufferResult> buffer_results(GstBuffer* buffer) {
  std::vector<BufferResult> results;
  gpointer state = nullptr;
  while (GstMeta* meta =
             gst_buffer_iterate_meta_filtered(buffer, &state, GST_SIFT_RESULT_META_API_TYPE)) {
    results.push_back(to_buffer_result(reinterpret_cast<const GstSiftResultMeta*>(meta)));
  }
  std::stable_sort(results.begin(), results.end(),
                   [](const BufferResult& a, const BufferResult& b) { return a.stage < b.stage; });
  return results;
}

std::optional<BufferResult> find_buffer_result(GstBuffer* buffer, std::string_view kind) {
  for (const BufferResult& r : buffer_results(buffer)) {
    if (r.kind == kind) return r;
  }
  return std::nullopt;
}

std::optional<BufferResult> last_buffer_result(GstBuffer* buffer, std::string_view kind) {
  std::optional<BufferResult> last;
  gpointer state = nullptr;
  while (GstMeta* meta =
             gst_buffer_iterate_meta_filtered(buffer, &state, GST_SIFT_RESULT_META_API_TYPE)) {
    const BufferResult r = to_buffer_result(reinterpret_cast<const GstSiftResultMeta*>(meta));
    if (r.kind == kind && (!last || r.stage >= last->stage)) last = r;
  }
  return last;
}

}  // namespace starsift::gst
