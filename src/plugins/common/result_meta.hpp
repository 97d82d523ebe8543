// SPDX-License-Identifier: LGPL-2.1-or-later
// GstSiftResultMeta: a stage's per-frame result (pipeline/stage_result.hpp) riding on the
// buffer of the frame it belongs to. Every starsift filter element adds one meta per stage
// that declares a result (siftwhiten: one "whiten-stats" record; a chain: one per such
// stage), on the frame's output buffer, at every depth.
//
// The records are the stage's C++ records as bytes (WhitenStats for "whiten-stats"): read
// them in the same build, through the accessors below, which check the kind and the record
// size. The meta has no tags: whole copies of the buffer keep it, region copies drop it.
#pragma once

#include <gst/gst.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "pipeline/stage_result.hpp"

struct GstSiftResultMeta {
  GstMeta meta;
  guint stage;              // the stage's index in the element's chain, from 0
  const gchar* stage_name;  // FilterStage::name(), interned
  const gchar* kind;        // ResultLayout::kind, interned
  guint32 count;            // records held
  guint32 overflow;         // records the stage could not keep (beyond its capacity)
  guint32 capacity;         // records the stage can hand back per frame
  gsize record_bytes;
  guint8* records;  // count * record_bytes bytes, owned
};

GType gst_sift_result_meta_api_get_type(void);
#define GST_SIFT_RESULT_META_API_TYPE (gst_sift_result_meta_api_get_type())
const GstMetaInfo* gst_sift_result_meta_get_info(void);
#define GST_SIFT_RESULT_META_INFO (gst_sift_result_meta_get_info())

namespace starsift::gst {

// A result on a buffer, as C++ reads it.
struct BufferResult {
  unsigned stage = 0;
  std::string_view stage_name;
  std::string_view kind;
  std::uint32_t count = 0;
  std::uint32_t overflow = 0;
  std::uint32_t capacity = 0;
  std::size_t record_bytes = 0;
  const std::byte* records = nullptr;  // valid while the buffer holds the meta

  // The records as T; empty when T is not the record type (its size differs).
  template <class T>
  std::span<const T> as() const noexcept {
    if (sizeof(T) != record_bytes || records == nullptr) return {};
    return {reinterpret_cast<const T*>(records), count};
  }
};

// Adds a meta holding a copy of `result`'s records to a writable `buffer`. `stage_name` and
// `kind` are interned strings (g_intern_string), so nothing but the records is copied.
GstSiftResultMeta* add_result_meta(GstBuffer* buffer, unsigned stage, const gchar* stage_name,
                                   const gchar* kind, const ResultLayout& layout,
                                   ConstResultView result);

// Every result on `buffer`, in stage order.
std::vector<BufferResult> buffer_results(GstBuffer* buffer);
// The first result of `kind` on `buffer`.
std::optional<BufferResult> find_buffer_result(GstBuffer* buffer, std::string_view kind);
// The result of `kind` of the last stage that wrote one (a chain's final detect stage), read
// from the metas in place: nothing allocated, for a caller on every frame.
std::optional<BufferResult> last_buffer_result(GstBuffer* buffer, std::string_view kind);

}  // namespace starsift::gst
