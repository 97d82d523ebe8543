// SPDX-License-Identifier: LGPL-2.1-or-later
// Bridges between GStreamer video types and the pipeline layer: formats, frame shapes,
// mapped buffers as image views, and exceptions turned into element errors.
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

#include <optional>

#include "pipeline/image.hpp"
#include "pipeline/pixel_format.hpp"

// The raw video formats the starsift elements process, in system memory.
#define STARSIFT_VIDEO_FORMATS "{ GRAY8, GRAY16_LE, RGBA, BGRA, RGBx, BGRx }"
#define STARSIFT_VIDEO_CAPS GST_VIDEO_CAPS_MAKE(STARSIFT_VIDEO_FORMATS)

namespace starsift::gst {

// The starsift format of a GStreamer video format, or nothing when starsift has none.
std::optional<PixelFormat> pixel_format_from_gst(GstVideoFormat format) noexcept;

// The GStreamer format of a starsift format, or nothing when GStreamer has none (GRAY32F).
std::optional<GstVideoFormat> gst_format_of(PixelFormat format) noexcept;

// The frame shape negotiated in `info`, with the format's own bit depth (16 for GRAY16_LE:
// the element base refines it from its bit-depth property or the caps). Throws Error for a
// format outside STARSIFT_VIDEO_FORMATS.
FrameShape frame_shape_from_info(const GstVideoInfo& info);

// Caps fields saying that the samples are a significance image (SignificanceScale): siftwhiten
// output=significance writes them on its src caps, siftdetect (background auto) reads them, so
// a threshold in sigmas means whitening's own per-pixel sigma between separate elements.
inline constexpr const char* kSignificanceOffsetField = "significance-offset";
inline constexpr const char* kSignificanceGainField = "significance-gain";

// The scale a caps structure carries (absent when it carries none or a gain of 0).
SignificanceScale significance_from_structure(const GstStructure* structure) noexcept;

// Writes `scale` into a caps structure, or removes the fields when it is absent.
void set_significance_fields(GstStructure* structure, const SignificanceScale& scale) noexcept;

// A buffer mapped as one video frame (GstVideoMeta strides honoured when present), unmapped
// on destruction.
class MappedFrame {
 public:
  MappedFrame(const GstVideoInfo& info, GstBuffer* buffer, GstMapFlags flags);
  ~MappedFrame();
  MappedFrame(const MappedFrame&) = delete;
  MappedFrame& operator=(const MappedFrame&) = delete;

  bool ok() const noexcept { return mapped_; }
  // Plane 0 as a view in `format`. Only valid while this object lives and ok() is true.
  ImageView view(PixelFormat format) const noexcept;
  ConstImageView const_view(PixelFormat format) const noexcept {
    return starsift::const_view(view(format));
  }

 private:
  GstVideoFrame frame_{};
  bool mapped_ = false;
};

// Posts the exception being handled as an ERROR message from `element`, its text as the
// message and "while <context>" as the debug: starsift::Error as `settings_domain`/
// `settings_code`, anything else as LIBRARY/FAILED. Call only inside a catch block (through
// the macros below); never throws.
void post_current_exception(GstElement* element, const char* context, const char* file,
                            const char* function, int line, GQuark settings_domain,
                            gint settings_code) noexcept;

}  // namespace starsift::gst

// Use as: catch (...) { STARSIFT_POST_CURRENT_EXCEPTION(self, "setting caps"); return FALSE; }
#define STARSIFT_POST_CURRENT_EXCEPTION(element, context)                                          \
  ::starsift::gst::post_current_exception(GST_ELEMENT(element), (context), __FILE__, GST_FUNCTION, \
                                          __LINE__, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS)

// The same for a configuration the element was given (a file, an inline text): a
// starsift::Error is posted as RESOURCE/SETTINGS.
#define STARSIFT_POST_CURRENT_CONFIG_EXCEPTION(element, context)                                   \
  ::starsift::gst::post_current_exception(GST_ELEMENT(element), (context), __FILE__, GST_FUNCTION, \
                                          __LINE__, GST_RESOURCE_ERROR,                            \
                                          GST_RESOURCE_ERROR_SETTINGS)
