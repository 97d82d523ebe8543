// SPDX-License-Identifier: LGPL-2.1-or-later
// What the element tests share: starsift elements made from property strings, a GstHarness
// around one, frames as buffers and back, the median reference, GLib warnings and real
// pipelines run to EOS or ERROR. The plugin is found through GST_PLUGIN_PATH (set by ctest).
#pragma once

#include <gst/check/gstharness.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/median/params.hpp"
#include "pipeline/pixel_format.hpp"
#include "support/test_image.hpp"

namespace starsift::test {

using Properties = std::initializer_list<std::pair<const char*, const char*>>;

// The six formats the elements process, as GStreamer negotiates them.
inline constexpr PixelFormat kGstFormats[] = {PixelFormat::Gray8, PixelFormat::Gray16,
                                              PixelFormat::Rgba,  PixelFormat::Bgra,
                                              PixelFormat::Rgbx,  PixelFormat::Bgrx};

void init_gstreamer();

// The element `factory` with `props` set from strings, as gst-launch-1.0 would set them.
GstElement* make_element(const char* factory, Properties props);

// A harness around a fresh element (set to PLAYING by the harness).
class Harness {
 public:
  Harness(const char* factory, Properties props);
  // Around `element` (a floating or owned reference, which the harness takes).
  explicit Harness(GstElement* element);
  ~Harness();
  Harness(const Harness&) = delete;
  Harness& operator=(const Harness&) = delete;

  GstHarness* get() const { return h_; }
  GstElement* element() const { return h_->element; }

  // Gives the element a bus so its ERROR and WARNING messages can be read.
  GstBus* bus();

 private:
  GstHarness* h_ = nullptr;
  GstBus* bus_ = nullptr;
};

// The GStreamer name of a format (pixel_format.hpp spells them as GStreamer does).
std::string gst_format_name(PixelFormat format);
std::string caps_string(PixelFormat format, int width, int height);
GstVideoInfo video_info(PixelFormat format, int width, int height);

// A random test frame with the row stride GStreamer gives this format and width (or `stride`
// when not 0), with a 0 sentinel at the first sample and the maximum at the last pixel.
TestImage make_frame(PixelFormat format, int width, int height, std::uint32_t seed,
                     std::ptrdiff_t stride = 0);

// Wraps `image` (padding included) in a buffer. With `add_meta` the buffer carries a
// GstVideoMeta with the image's own stride, which need not be GStreamer's default.
GstBuffer* to_buffer(const TestImage& image, bool add_meta = false);

// Reads a pulled buffer back as an image with GStreamer's default stride.
TestImage from_buffer(GstBuffer* buffer, PixelFormat format, int width, int height);

// median_reference() of `in`, on a small thread pool.
TestImage median_of(const MedianParams& params, const TestImage& in);

// Pushes `in` through the harness and returns the output frame.
TestImage push_and_pull(Harness& harness, const TestImage& in, bool add_meta = false);

void check_same(const TestImage& actual, const TestImage& expected);

std::string string_property(GstElement* element, const char* name);

// Every property of `element` has a non-empty description.
void check_properties_documented(GstElement* element);

// Runs `gst-inspect-1.0 factory` and checks that its text holds each of `expected`, whitespace
// aside (gst-inspect-1.0 wraps long lines and aligns numbers). Where gst-inspect-1.0 cannot be
// run it warns and checks nothing.
void check_inspect_shows(const char* factory, std::initializer_list<const char*> expected);

// Sets the double property `name` of `element` to `value`, which the element refuses: the
// property keeps `kept`, and exactly one warning, which contains `message_part`, is logged.
void check_double_refused(GstElement* element, const char* name, double value, double kept,
                          const char* message_part);

// The caps the harness's element has put out are `caps` (a transform in place: what came in).
void check_output_caps(Harness& harness, const std::string& caps);

// `factory`'s sink pad refuses I420, GRAY16_BE and RGB.
void check_refuses_other_formats(const char* factory);

// Collects GLib warnings of the plugin's and GObject's log domains while alive.
class WarningCapture {
 public:
  WarningCapture();
  ~WarningCapture();
  WarningCapture(const WarningCapture&) = delete;
  WarningCapture& operator=(const WarningCapture&) = delete;

  const std::vector<std::string>& messages() const { return messages_; }
  std::string all() const;

 private:
  static void on_log(const gchar*, GLogLevelFlags, const gchar* message, gpointer self);
  std::vector<std::pair<const char*, guint>> handlers_;
  std::vector<std::string> messages_;
};

// An ERROR message's error and debug string.
struct ErrorText {
  GQuark domain = 0;
  gint code = 0;
  std::string message;
  std::string debug;
};
ErrorText parse_error(GstMessage* message);

// Where CUDA is not usable: after a frame on the CPU through `harness` (started with
// backend=cpu, no caps yet), backend=cuda makes the next push fail with an ERROR naming
// backend=cuda. Where it is usable there is nothing to check.
void check_switch_to_cuda_fails(Harness& harness);

// For tests of backend=cuda: true where a CUDA device is usable, else false after a visible
// warning that the test is skipped and why.
bool cuda_usable_or_skip();

struct PipelineResult {
  bool eos = false;
  std::string error;        // the first ERROR message's text, empty when none
  std::string error_debug;  // its debug string
};

// Runs a gst-launch style pipeline until EOS or ERROR (or 20 s).
PipelineResult run_pipeline(const char* description);

}  // namespace starsift::test
