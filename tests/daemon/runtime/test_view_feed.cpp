// SPDX-License-Identifier: LGPL-2.1-or-later
// A live view's feed (view_feed.hpp) into a real appsrc: each frame is stamped with the
// running time at which it leaves the appsrc, also when it was pushed in the moment a media
// goes to PLAYING, when the appsrc has its clock but not yet its base time. Stamped at the
// push, such a frame carried the clock's absolute time, hours ahead of the running time, and
// the media's sink waited that long: the client saw no picture.
#include <gst/app/gstappsink.h>
#include <gst/gst.h>

#include <catch2/catch.hpp>

#include <cstring>

#include "daemon/stream/view_feed.hpp"

using namespace starsift;
using namespace starsift::daemon;

namespace {

constexpr int kWidth = 32;
constexpr int kHeight = 24;

// appsrc (as a media's) into an appsink that takes frames as they come. The appsrc stamps
// frames at the push too (do-timestamp), as the media's once did: the feed's stamp must win.
struct FeedPipeline {
  GstElement* pipeline = nullptr;
  GstElement* appsrc = nullptr;
  GstElement* sink = nullptr;

  FeedPipeline() {
    if (!gst_is_initialized()) gst_init(nullptr, nullptr);
    GError* error = nullptr;
    pipeline = gst_parse_launch(
        "appsrc name=frames is-live=true format=time do-timestamp=true max-buffers=2 "
        "leaky-type=downstream "
        "block=false ! appsink name=out sync=false max-buffers=8 drop=false",
        &error);
    g_clear_error(&error);
    REQUIRE(pipeline != nullptr);
    appsrc = gst_bin_get_by_name(GST_BIN(pipeline), "frames");
    sink = gst_bin_get_by_name(GST_BIN(pipeline), "out");
  }
  ~FeedPipeline() {
    gst_element_set_state(pipeline, GST_STATE_NULL);
    gst_object_unref(sink);
    gst_object_unref(appsrc);
    gst_object_unref(pipeline);
  }
  FeedPipeline(const FeedPipeline&) = delete;
  FeedPipeline& operator=(const FeedPipeline&) = delete;

  GstClockTime running_time() const {
    GstClock* clock = gst_element_get_clock(pipeline);
    REQUIRE(clock != nullptr);
    const GstClockTime now = gst_clock_get_time(clock);
    gst_object_unref(clock);
    return now - gst_element_get_base_time(pipeline);
  }
};

void push_frame(ViewFeed& feed, std::uint8_t value) {
  auto fill = [&](ImageView out) {
    for (int y = 0; y < out.height; ++y) std::memset(out.row(y), value, out.width);
  };
  feed.push(kWidth, kHeight, -1, fill);
}

// The next frame out of the appsink: its PTS and first byte.
struct Received {
  GstClockTime pts = GST_CLOCK_TIME_NONE;
  int value = -1;
};
Received receive(GstElement* sink) {
  Received r;
  GstSample* sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 5 * GST_SECOND);
  if (sample == nullptr) return r;
  GstBuffer* buffer = gst_sample_get_buffer(sample);
  r.pts = GST_BUFFER_PTS(buffer);
  std::uint8_t first = 0;
  gst_buffer_extract(buffer, 0, &first, 1);
  r.value = first;
  gst_sample_unref(sample);
  return r;
}

}  // namespace

TEST_CASE("A view's frames carry the running time at which they leave the appsrc",
          "[starsiftd][views]") {
  FeedPipeline p;
  ViewFeed feed("sky", StreamView::Raw, 10.0);
  REQUIRE(gst_element_set_state(p.pipeline, GST_STATE_PAUSED) != GST_STATE_CHANGE_FAILURE);
  // The moment between a pipeline's clock reaching the appsrc and its base time: the frame
  // pushed now must not take the clock's absolute time.
  gst_element_set_clock(p.appsrc, gst_system_clock_obtain());
  gst_object_unref(gst_element_get_clock(p.appsrc));  // the extra reference obtain() gave
  REQUIRE(gst_element_get_base_time(p.appsrc) == 0);
  feed.attach(p.appsrc);
  push_frame(feed, 7);
  REQUIRE(gst_element_set_state(p.pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);

  const Received first = receive(p.sink);
  REQUIRE(first.value == 7);
  REQUIRE(GST_CLOCK_TIME_IS_VALID(first.pts));
  const GstClockTime after_first = p.running_time();
  INFO("PTS " << first.pts << " ns, running time " << after_first << " ns");
  CHECK(first.pts <= after_first);

  // A frame pushed in PLAYING: later than the first, and no later than the running time.
  push_frame(feed, 9);
  const Received second = receive(p.sink);
  REQUIRE(second.value == 9);
  CHECK(second.pts > first.pts);
  CHECK(second.pts <= p.running_time());

  // Attached again (a new client of the same media): the latest frame at once, then the next.
  feed.detach(p.appsrc);
  feed.attach(p.appsrc);
  push_frame(feed, 11);
  Received third = receive(p.sink);
  while (third.value == 9) third = receive(p.sink);  // the latest frame, handed at attach()
  REQUIRE(third.value == 11);
  CHECK(third.pts > second.pts);
  CHECK(third.pts <= p.running_time());
  feed.detach(p.appsrc);
}
