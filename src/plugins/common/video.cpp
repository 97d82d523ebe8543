// SPDX-License-Identifier: LGPL-2.1-or-later
#include "plugins/common/video.hpp"

#include <exception>
#include <string>

#include "pipeline/error.hpp"

namespace starsift::gst {

std::optional<PixelFormat> pixel_format_from_gst(GstVideoFormat format) noexcept {
  switch (format) {
    case GST_VIDEO_FORMAT_GRAY8:
      return PixelFormat::Gray8;
    case GST_VIDEO_FORMAT_GRAY16_LE:
      return PixelFormat::Gray16;
    case GST_VIDEO_FORMAT_RGBA:
      return PixelFormat::Rgba;
    case GST_VIDEO_FORMAT_BGRA:
      return PixelFormat::Bgra;
    case GST_VIDEO_FORMAT_RGBx:
      return PixelFormat::Rgbx;
    case GST_VIDEO_FORMAT_BGRx:
      return PixelFormat::Bgrx;
    default:
      return std::nullopt;
  }
}

std::optional<GstVideoFormat> gst_format_of(PixelFormat format) noexcept {
  switch (format) {
    case PixelFormat::Gray8:
      return GST_VIDEO_FORMAT_GRAY8;
    case PixelFormat::Gray16:
      return GST_VIDEO_FORMAT_GRAY16_LE;
    case PixelFormat::Rgba:
      return GST_VIDEO_FORMAT_RGBA;
    case PixelFormat::Bgra:
      return GST_VIDEO_FORMAT_BGRA;
    case PixelFormat::Rgbx:
      return GST_VIDEO_FORMAT_RGBx;
    case PixelFormat::Bgrx:
      return GST_VIDEO_FORMAT_BGRx;
    case PixelFormat::Gray32F:
      break;
  }
  return std::nullopt;
}

FrameShape frame_shape_from_info(const GstVideoInfo& info) {
  const std::optional<PixelFormat> format = pixel_format_from_gst(GST_VIDEO_INFO_FORMAT(&info));
  if (!format) {
    throw Error(std::string("video format ") +
                    gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&info)) + " is not supported",
                "GRAY8, GRAY16_LE, RGBA, BGRA, RGBx, BGRx");
  }
  FrameShape shape;
  shape.width = GST_VIDEO_INFO_WIDTH(&info);
  shape.height = GST_VIDEO_INFO_HEIGHT(&info);
  shape.format = *format;
  shape.bit_depth = default_bit_depth(*format);
  shape.validate();
  return shape;
}

SignificanceScale significance_from_structure(const GstStructure* structure) noexcept {
  SignificanceScale scale;
  double offset = 0.0, gain = 0.0;
  if (gst_structure_get_double(structure, kSignificanceGainField, &gain) && gain != 0.0) {
    gst_structure_get_double(structure, kSignificanceOffsetField, &offset);
    scale = {offset, gain};
  }
  return scale;
}

void set_significance_fields(GstStructure* structure, const SignificanceScale& scale) noexcept {
  if (!scale.present()) {
    gst_structure_remove_fields(structure, kSignificanceOffsetField, kSignificanceGainField,
                                nullptr);
    return;
  }
  gst_structure_set(structure, kSignificanceOffsetField, G_TYPE_DOUBLE, scale.offset,
                    kSignificanceGainField, G_TYPE_DOUBLE, scale.gain, nullptr);
}

MappedFrame::MappedFrame(const GstVideoInfo& info, GstBuffer* buffer, GstMapFlags flags)
    : mapped_(gst_video_frame_map(&frame_, &info, buffer, flags) != FALSE) {}

MappedFrame::~MappedFrame() {
  if (mapped_) gst_video_frame_unmap(&frame_);
}

ImageView MappedFrame::view(PixelFormat format) const noexcept {
  return {static_cast<std::byte*>(GST_VIDEO_FRAME_PLANE_DATA(&frame_, 0)),
          GST_VIDEO_FRAME_WIDTH(&frame_), GST_VIDEO_FRAME_HEIGHT(&frame_),
          GST_VIDEO_FRAME_PLANE_STRIDE(&frame_, 0), format};
}

void post_current_exception(GstElement* element, const char* context, const char* file,
                            const char* function, int line, GQuark settings_domain,
                            gint settings_code) noexcept {
  GQuark domain = GST_LIBRARY_ERROR;
  gint code = GST_LIBRARY_ERROR_FAILED;
  const char* what = "unknown exception";
  try {
    throw;
  } catch (const Error& e) {
    domain = settings_domain;
    code = settings_code;
    what = e.what();
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
  }
  // gst_element_message_full takes ownership of both strings.
  gst_element_message_full(element, GST_MESSAGE_ERROR, domain, code, g_strdup(what),
                           g_strdup_printf("while %s", context), file, function, line);
}

}  // namespace starsift::gst
