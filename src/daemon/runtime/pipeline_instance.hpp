// SPDX-License-Identifier: LGPL-2.1-or-later
// One GstPipeline built from a PipelinePlan, with the probes that hand its frames to the
// pipeline's FrameOutputs. A reload that rebuilds, or a restart, makes a new instance; the old
// one is handed to a Teardown, which stops it on a thread of its own.
//
// Time: each frame's UTC is taken where it enters the raw tee (the source's output), from
// the buffer's timestamp. For a live source the timestamp is its capture on the pipeline
// clock, so UTC = the wall clock now − (pipeline clock now − base time − the frame's running
// time): the frame's age on one monotonic clock, taken from the wall clock read at the same
// moment (live_frame_utc_us()). For a source that is not live (a file, a sky run as fast as it
// goes) the frames are placed at the wall clock of the pipeline's start plus their running
// time (file_frame_utc_us()).
#pragma once

#include <gst/gst.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "daemon/runtime/frame_outputs.hpp"
#include "daemon/runtime/pipeline_plan.hpp"
#include "daemon/stream/rtsp_server.hpp"

namespace starsift::daemon {

// A GstPipeline being stopped (set to NULL and freed) on a thread of its own, so a source
// that blocks in its stop (rtspsrc waiting on a dead camera) never blocks the main loop.
class Teardown {
 public:
  // Takes `pipeline` (the caller's reference) and starts the thread.
  Teardown(std::string name, GstElement* pipeline);
  bool done() const noexcept { return done_->load(); }
  const std::string& name() const noexcept { return name_; }
  std::int64_t started_us() const noexcept { return started_us_; }

 private:
  std::string name_;
  std::int64_t started_us_;
  // Shared with the thread, which may outlive this object.
  std::shared_ptr<std::atomic<bool>> done_ = std::make_shared<std::atomic<bool>>(false);
};

// siftchain's own account of its latest frame: each stage's time, the copies to and from the
// GPU, and how its inputs came in.
struct ChainTimes {
  std::vector<std::pair<std::string, double>> stage_s;  // "whiten", seconds
  double upload_s = 0.0;                                // 0 on the CPU
  double download_s = 0.0;                              // 0 on the CPU
  std::uint64_t zero_copy = 0;                          // inputs the engine took without a copy
  std::uint64_t copied = 0;                             // inputs copied once
};

class PipelineInstance {
 public:
  // Builds every element of `plan` and links them; throws Error naming what failed (a missing
  // element with the package that has it, a source description that does not parse).
  PipelineInstance(const PipelinePlan& plan, std::shared_ptr<FrameOutputs> outputs,
                   ViewFeeds views = {});
  ~PipelineInstance();  // release()s when not released yet, and waits for nothing
  PipelineInstance(const PipelineInstance&) = delete;
  PipelineInstance& operator=(const PipelineInstance&) = delete;

  GstElement* pipeline() const noexcept { return pipeline_; }
  // To PLAYING; throws Error when the state change fails at once.
  void play();
  // EOS into the sources: every branch drains and closes its files.
  void send_eos();
  // A video file played again from its start.
  void rewind();

  // The live views' frames go to these feeds from the next frame (a new RTSP server).
  void set_views(const ViewFeeds& views);

  // Live changes: siftchain's chain (flow YAML) and siftdetect's properties.
  void set_chain(const std::string& flow_yaml);
  void set_detect(const DetectParams& params);
  // "cpu" or "cuda:N" of the chain's elements while running; empty when unknown.
  std::string active_backend() const;
  // What siftchain says of its latest frame (its `stats`); nothing without a siftchain.
  std::optional<ChainTimes> chain_times() const;
  // What a siftcamsrc source read back from its camera at start ("Aravis-Fake-GV01 (model):
  // Mono16 512x512, 10 fps, exposure 5000 us, gain 2 dB, packets 1500 B"); empty for
  // other sources.
  std::string camera_description() const;

  // The probes stop handing frames on, and the pipeline goes to a Teardown.
  std::shared_ptr<Teardown> release();

  // What the probes share with the instance (defined in the .cpp).
  struct ProbeContext;

 private:
  void add_probes(const PipelinePlan& plan);

  std::string name_;
  GstElement* pipeline_ = nullptr;
  std::shared_ptr<ProbeContext> context_;
};

// Sets `object`'s property `key` from its text as gst-launch-1.0 writes it. Throws Error
// naming the element, the property and the value when the element has no such property or
// the text is no value of its type.
void set_property_text(GObject* object, const std::string& key, const std::string& value);

}  // namespace starsift::daemon
