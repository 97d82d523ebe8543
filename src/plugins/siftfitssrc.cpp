// SPDX-License-Identifier: LGPL-2.1-or-later
/**
 * SECTION:element-siftfitssrc
 * @title: siftfitssrc
 *
 * FITS frames, one file after another, as video: #GstSiftFitsSrc:location names one file or
 * a glob pattern ("/data/2026-11-27/&ast;.fits"), taken in name order. Each file's primary image
 * must be 2-D, BITPIX 8 (GRAY8) or BITPIX 16 with BZERO 32768 (unsigned 16 bits, GRAY16_LE),
 * as cameras and starsiftd write them; FITS row 1 becomes the frame's top row, as starsiftd
 * writes them.
 *
 * Timestamps: with #GstSiftFitsSrc:fps 0/1 (the default) and a DATE-OBS in the first file,
 * each frame's timestamp is its DATE-OBS less the first one's (the caps' framerate is 0/1);
 * a frame whose DATE-OBS is missing or not after the previous one's is stamped one interval
 * after it, with a warning. Otherwise frames follow #GstSiftFitsSrc:fps (25/1 when it is
 * 0/1). Every frame with a DATE-OBS also carries it as a GstReferenceTimestampMeta
 * ("timestamp/x-unix", UTC), which starsiftd takes as the frame's time.
 *
 * A file that cannot be read, or whose size or type differs from the first file's, is passed
 * over with a warning naming it and counted (#GstSiftFitsSrc:stats); when no file of a pass
 * could be read, the element fails. With #GstSiftFitsSrc:loop the sequence starts again after
 * its last file, timestamps going on.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 siftfitssrc location="night/\*.fits" ! siftchain chain='[{whiten: {}}]' ! \
 *     siftdetect ! fakesink
 * ]|
 */

#include "plugins/siftfitssrc.hpp"

#include <gst/video/video.h>

#include <memory>
#include <optional>
#include <vector>

#include "pipeline/error.hpp"
#include "plugins/common/source_allocation.hpp"
#include "plugins/common/video.hpp"
#include "plugins/fits/fits_image.hpp"
#include "plugins/fits/frame_clock.hpp"

GST_DEBUG_CATEGORY_STATIC(gst_sift_fits_src_debug);
#define GST_CAT_DEFAULT gst_sift_fits_src_debug

using starsift::fits::FitsImageFile;
using starsift::fits::FitsImageHeader;
using starsift::fits::FrameClock;

// The rate frames follow without DATE-OBS and without an fps.
constexpr gint kFallbackFpsN = 25;

enum { PROP_0, PROP_LOCATION, PROP_FPS, PROP_LOOP, PROP_STATS, N_PROPERTIES };

static GParamSpec* properties[N_PROPERTIES];

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE(
    "src", GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS("video/x-raw, format = (string) { GRAY8, GRAY16_LE }, "
                    "width = (int) [ 1, 65536 ], height = (int) [ 1, 65536 ], "
                    "framerate = (fraction) [ 0/1, 2147483647/1 ]"));

static GstStaticCaps unix_time_caps = GST_STATIC_CAPS("timestamp/x-unix");

struct GstSiftFitsSrcState {
  GstSiftFitsSrcSettings settings;
  std::vector<std::filesystem::path> files;
  FitsImageHeader first;    // the first readable file: every frame must have its size and type
  GstCaps* caps = nullptr;  // fixed, from the first file
  GstVideoInfo info{};
  FrameClock clock{false, 0};
  std::size_t next = 0;  // index into files
  bool pushed_in_pass = false;
  bool warned_dates = false;
  std::uint64_t frame = 0;  // frames pushed since start

  GstSiftFitsSrcState() = default;
  GstSiftFitsSrcState(const GstSiftFitsSrcState&) = delete;
  GstSiftFitsSrcState& operator=(const GstSiftFitsSrcState&) = delete;
  ~GstSiftFitsSrcState() {
    if (caps != nullptr) gst_caps_unref(caps);
  }
};

#define gst_sift_fits_src_parent_class parent_class
G_DEFINE_TYPE(GstSiftFitsSrc, gst_sift_fits_src, GST_TYPE_PUSH_SRC);
GST_ELEMENT_REGISTER_DEFINE(siftfitssrc, "siftfitssrc", GST_RANK_NONE, GST_TYPE_SIFT_FITS_SRC);

/* helpers */

static void gst_sift_fits_src_count_skipped(GstSiftFitsSrc* self) {
  GST_OBJECT_LOCK(self);
  ++self->skipped;
  GST_OBJECT_UNLOCK(self);
}

// "differs from the first file's 512x512 16-bit image": why `header` cannot be a frame.
static std::string gst_sift_fits_src_mismatch(const FitsImageHeader& first,
                                              const FitsImageHeader& header) {
  if (header.width == first.width && header.height == first.height && header.bits == first.bits)
    return {};
  return "a " + std::to_string(header.width) + "x" + std::to_string(header.height) + " " +
         std::to_string(header.bits) + "-bit image, not the first file's " +
         std::to_string(first.width) + "x" + std::to_string(first.height) + " " +
         std::to_string(first.bits) + "-bit";
}

/* GstBaseSrc vfuncs */

// The pattern's files, and the first readable one's size and type as the caps.
static gboolean gst_sift_fits_src_start(GstBaseSrc* src) {
  GstSiftFitsSrc* self = GST_SIFT_FITS_SRC(src);
  auto state = std::make_unique<GstSiftFitsSrcState>();
  GST_OBJECT_LOCK(self);
  state->settings = self->settings;
  self->files = 0;
  self->frames = 0;
  self->skipped = 0;
  GST_OBJECT_UNLOCK(self);
  GstSiftFitsSrcState& s = *state;
  if (s.settings.location.empty()) {
    GST_ELEMENT_ERROR(self, RESOURCE, NOT_FOUND, ("no location: the FITS files to read"),
                      ("set location to a file or a glob pattern such as /data/night/*.fits"));
    return FALSE;
  }
  try {
    s.files = starsift::fits::files_matching(s.settings.location);
  } catch (...) {
    starsift::gst::post_current_exception(GST_ELEMENT(self), "finding the files", __FILE__,
                                          GST_FUNCTION, __LINE__, GST_RESOURCE_ERROR,
                                          GST_RESOURCE_ERROR_NOT_FOUND);
    return FALSE;
  }
  std::string why_not;
  bool found = false;
  for (const auto& path : s.files) {
    try {
      s.first = FitsImageFile(path).header();
      found = true;
      break;
    } catch (const starsift::Error& e) {
      if (why_not.empty()) why_not = e.problem();
    }
  }
  if (!found) {
    GST_ELEMENT_ERROR(self, RESOURCE, READ,
                      ("none of the %zu files '%s' names is a FITS frame siftfitssrc reads",
                       s.files.size(), s.settings.location.c_str()),
                      ("the first: %s", why_not.c_str()));
    return FALSE;
  }
  gint fps_n = s.settings.fps_n, fps_d = s.settings.fps_d;
  const bool by_date = fps_n == 0 && s.first.utc_us.has_value();
  if (fps_n == 0 && !by_date) {
    fps_n = kFallbackFpsN;
    fps_d = 1;
  }
  const auto period = static_cast<std::int64_t>(gst_util_uint64_scale_int(
      GST_SECOND, fps_n > 0 ? fps_d : 1, fps_n > 0 ? fps_n : kFallbackFpsN));
  s.clock = FrameClock(by_date, period);
  s.caps = gst_caps_new_simple(
      "video/x-raw", "format", G_TYPE_STRING, s.first.bits == 8 ? "GRAY8" : "GRAY16_LE", "width",
      G_TYPE_INT, s.first.width, "height", G_TYPE_INT, s.first.height, "framerate",
      GST_TYPE_FRACTION, by_date ? 0 : fps_n, by_date ? 1 : fps_d, nullptr);
  gst_video_info_from_caps(&s.info, s.caps);
  GST_INFO_OBJECT(self, "%zu files, %" GST_PTR_FORMAT ", timestamps %s", s.files.size(), s.caps,
                  by_date ? "from DATE-OBS" : "at the frame rate");
  GST_OBJECT_LOCK(self);
  self->files = s.files.size();
  GST_OBJECT_UNLOCK(self);
  self->state = state.release();
  return TRUE;
}

static gboolean gst_sift_fits_src_stop(GstBaseSrc* src) {
  GstSiftFitsSrc* self = GST_SIFT_FITS_SRC(src);
  delete self->state;
  self->state = nullptr;
  return TRUE;
}

// The first file's caps once started; the template's before.
static GstCaps* gst_sift_fits_src_get_caps(GstBaseSrc* src, GstCaps* filter) {
  GstSiftFitsSrc* self = GST_SIFT_FITS_SRC(src);
  GstCaps* caps = self->state != nullptr ? gst_caps_ref(self->state->caps)
                                         : gst_pad_get_pad_template_caps(GST_BASE_SRC_PAD(src));
  if (filter != nullptr) {
    GstCaps* both = gst_caps_intersect_full(filter, caps, GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref(caps);
    caps = both;
  }
  return caps;
}

static gboolean gst_sift_fits_src_decide_allocation(GstBaseSrc* src, GstQuery* query) {
  if (!starsift::gst::decide_source_allocation(query)) return FALSE;
  return GST_BASE_SRC_CLASS(parent_class)->decide_allocation(src, query);
}

/* GstPushSrc vfuncs */

// Reads the next readable file into `buffer`; returns its header, or nullopt at the end of
// the sequence. Files that cannot be frames are warned about, counted and passed over.
static std::optional<FitsImageHeader> gst_sift_fits_src_read_next(GstSiftFitsSrc* self,
                                                                  GstSiftFitsSrcState& s,
                                                                  GstBuffer* buffer) {
  for (;;) {
    if (s.next == s.files.size()) {
      if (!s.settings.loop) return std::nullopt;
      if (!s.pushed_in_pass) throw starsift::Error("no file of the sequence could be read");
      s.next = 0;
      s.pushed_in_pass = false;
      s.clock.start_pass();
    }
    const std::filesystem::path& path = s.files[s.next++];
    try {
      const FitsImageFile file(path);
      const std::string mismatch = gst_sift_fits_src_mismatch(s.first, file.header());
      if (!mismatch.empty()) {
        throw starsift::Error("FITS file '" + path.string() + "': " + mismatch);
      }
      const starsift::gst::MappedFrame frame(s.info, buffer, GST_MAP_WRITE);
      if (!frame.ok()) throw starsift::Error("could not map the output buffer for writing");
      const auto view = frame.view(s.first.bits == 8 ? starsift::PixelFormat::Gray8
                                                     : starsift::PixelFormat::Gray16);
      file.read_pixels(static_cast<std::byte*>(view.data), view.stride);
      s.pushed_in_pass = true;
      return file.header();
    } catch (const starsift::Error& e) {
      gst_sift_fits_src_count_skipped(self);
      GST_ELEMENT_WARNING(self, RESOURCE, READ, ("%s; passed over", e.problem().c_str()),
                          (nullptr));
    }
  }
}

static GstFlowReturn gst_sift_fits_src_fill(GstPushSrc* push_src, GstBuffer* buffer) {
  GstSiftFitsSrc* self = GST_SIFT_FITS_SRC(push_src);
  if (self->state == nullptr) {
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, (nullptr), ("a frame was asked for before start"));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  GstSiftFitsSrcState& s = *self->state;
  std::optional<FitsImageHeader> header;
  try {
    header = gst_sift_fits_src_read_next(self, s, buffer);
  } catch (...) {
    STARSIFT_POST_CURRENT_EXCEPTION(self, "reading the FITS files");
    return GST_FLOW_ERROR;
  }
  if (!header) {
    if (!s.pushed_in_pass) {
      GST_ELEMENT_ERROR(self, RESOURCE, READ,
                        ("no file '%s' names could be read", s.settings.location.c_str()),
                        (nullptr));
      return GST_FLOW_ERROR;
    }
    return GST_FLOW_EOS;
  }

  const FrameClock::Stamp stamp = s.clock.next(header->utc_us);
  if (stamp.estimated && !s.warned_dates) {
    s.warned_dates = true;
    GST_ELEMENT_WARNING(self, STREAM, FORMAT,
                        ("a frame has no DATE-OBS, or one not after the previous frame's: such "
                         "frames are stamped one interval after the previous"),
                        ("file %s", s.files[s.next - 1].c_str()));
  }
  GST_BUFFER_PTS(buffer) = static_cast<GstClockTime>(stamp.pts_ns);
  GST_BUFFER_DTS(buffer) = GST_CLOCK_TIME_NONE;
  GST_BUFFER_DURATION(buffer) = static_cast<GstClockTime>(s.clock.period_ns());
  GST_BUFFER_OFFSET(buffer) = s.frame;
  GST_BUFFER_OFFSET_END(buffer) = s.frame + 1;
  if (s.frame == 0) GST_BUFFER_FLAG_SET(buffer, GST_BUFFER_FLAG_DISCONT);
  if (header->utc_us) {
    gst_buffer_add_reference_timestamp_meta(
        buffer, gst_static_caps_get(&unix_time_caps),
        static_cast<GstClockTime>(*header->utc_us) * GST_USECOND, GST_CLOCK_TIME_NONE);
  }
  ++s.frame;
  GST_OBJECT_LOCK(self);
  ++self->frames;
  GST_OBJECT_UNLOCK(self);
  return GST_FLOW_OK;
}

/* GObject vfuncs */

static void gst_sift_fits_src_set_property(GObject* object, guint prop_id, const GValue* value,
                                           GParamSpec* pspec) {
  GstSiftFitsSrc* self = GST_SIFT_FITS_SRC(object);
  GST_OBJECT_LOCK(self);
  switch (prop_id) {
    case PROP_LOCATION: {
      const gchar* text = g_value_get_string(value);
      self->settings.location = text != nullptr ? text : "";
      break;
    }
    case PROP_FPS:
      self->settings.fps_n = gst_value_get_fraction_numerator(value);
      self->settings.fps_d = gst_value_get_fraction_denominator(value);
      break;
    case PROP_LOOP:
      self->settings.loop = g_value_get_boolean(value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK(self);
}

static void gst_sift_fits_src_get_property(GObject* object, guint prop_id, GValue* value,
                                           GParamSpec* pspec) {
  GstSiftFitsSrc* self = GST_SIFT_FITS_SRC(object);
  GST_OBJECT_LOCK(self);
  switch (prop_id) {
    case PROP_LOCATION:
      g_value_set_string(value, self->settings.location.c_str());
      break;
    case PROP_FPS:
      gst_value_set_fraction(value, self->settings.fps_n, self->settings.fps_d);
      break;
    case PROP_LOOP:
      g_value_set_boolean(value, self->settings.loop);
      break;
    case PROP_STATS:
      g_value_take_boxed(
          value, gst_structure_new("siftfitssrc-stats", "files", G_TYPE_UINT64, self->files,
                                   "frames", G_TYPE_UINT64, self->frames, "skipped", G_TYPE_UINT64,
                                   self->skipped, nullptr));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK(self);
}

static void gst_sift_fits_src_finalize(GObject* object) {
  GstSiftFitsSrc* self = GST_SIFT_FITS_SRC(object);
  delete self->state;
  self->settings.~GstSiftFitsSrcSettings();
  G_OBJECT_CLASS(parent_class)->finalize(object);
}

static void gst_sift_fits_src_class_init(GstSiftFitsSrcClass* klass) {
  GObjectClass* gobject_class = G_OBJECT_CLASS(klass);
  GstElementClass* element_class = GST_ELEMENT_CLASS(klass);
  GstBaseSrcClass* base_class = GST_BASE_SRC_CLASS(klass);
  GstPushSrcClass* push_class = GST_PUSH_SRC_CLASS(klass);
  GST_DEBUG_CATEGORY_INIT(gst_sift_fits_src_debug, "siftfitssrc", 0, "starsift FITS source");

  gobject_class->set_property = gst_sift_fits_src_set_property;
  gobject_class->get_property = gst_sift_fits_src_get_property;
  gobject_class->finalize = gst_sift_fits_src_finalize;

  // Read at start: a change while running applies at the next start.
  const auto flags = static_cast<GParamFlags>(G_PARAM_READWRITE | GST_PARAM_MUTABLE_READY |
                                              G_PARAM_STATIC_STRINGS);
  properties[PROP_LOCATION] = g_param_spec_string(
      "location", "Location",
      "A FITS file, or a glob pattern naming several (/data/night/*.fits), read in name order", "",
      flags);
  properties[PROP_FPS] = gst_param_spec_fraction(
      "fps", "Frame rate",
      "Timestamps at this rate; 0/1: from each file's DATE-OBS (25/1 when the first file has "
      "none)",
      0, 1, G_MAXINT, 1, 0, 1, flags);
  properties[PROP_LOOP] = g_param_spec_boolean(
      "loop", "Loop", "After the last file, start again at the first; timestamps go on", FALSE,
      flags);
  properties[PROP_STATS] = g_param_spec_boxed(
      "stats", "Statistics",
      "siftfitssrc-stats: files (the pattern named), frames (pushed), skipped (files passed "
      "over: unreadable, or not the first file's size and type); guint64 each, reset at start",
      GST_TYPE_STRUCTURE, static_cast<GParamFlags>(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  g_object_class_install_properties(gobject_class, N_PROPERTIES, properties);

  gst_element_class_set_static_metadata(
      element_class, "FITS frames", "Source/Video",
      "A sequence of FITS frames (a file or a glob pattern), timestamped from DATE-OBS",
      "starsift");
  gst_element_class_add_static_pad_template(element_class, &src_template);

  base_class->start = GST_DEBUG_FUNCPTR(gst_sift_fits_src_start);
  base_class->stop = GST_DEBUG_FUNCPTR(gst_sift_fits_src_stop);
  base_class->get_caps = GST_DEBUG_FUNCPTR(gst_sift_fits_src_get_caps);
  base_class->decide_allocation = GST_DEBUG_FUNCPTR(gst_sift_fits_src_decide_allocation);
  push_class->fill = GST_DEBUG_FUNCPTR(gst_sift_fits_src_fill);
}

static void gst_sift_fits_src_init(GstSiftFitsSrc* self) {
  new (&self->settings) GstSiftFitsSrcSettings();
  self->files = 0;
  self->frames = 0;
  self->skipped = 0;
  self->state = nullptr;
  gst_base_src_set_format(GST_BASE_SRC(self), GST_FORMAT_TIME);
}
