// SPDX-License-Identifier: LGPL-2.1-or-later
// What a pipeline of the config becomes in GStreamer, as data: plan_pipeline() is a pure
// function of the config (tested without GStreamer); pipeline_builder.hpp makes the elements.
//
//   source (a gst-launch description, parsed into a bin)
//     ! [convert: videoconvert ! video/x-raw,format={GRAY16_LE,GRAY8}]   every source but sky and
//     aravis ! tee name=raw
//   raw. ! queue name=chain-queue ! [siftchain] ! [siftdetect] ! fakesink name=sink
//   raw. ! queue leaky ! appsink name=frames          FITS frames and the preview's raw panel
//   raw. ! queue leaky ! videoconvert ! x264enc ! splitmuxsink    recordings, when enabled
//   <tap>. ! queue leaky ! appsink name=view-<view>    each live view served (RTSP), where
//            <tap> is raw, a tee after siftchain (whitened) or after siftdetect (detections)
//
// The chain's stages before a final `detect` run in one siftchain (one pass over the frame);
// the final detect stage is siftdetect, whose tracker links the movers, with the stage's keys
// as its properties (they are named alike). Frames of live sources that the chain cannot take
// in time are dropped at chain-queue (leaky), never queued without bound; the frame numbers
// then show the gap and the drop is counted.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/config/daemon_config.hpp"
#include "daemon/runtime/element_spec.hpp"

namespace starsift::daemon {

// Names of the elements the runtime finds again in a built pipeline.
inline constexpr const char* kSourceBinName = "source";
inline constexpr const char* kRawTeeName = "raw";
inline constexpr const char* kChainQueueName = "chain-queue";
inline constexpr const char* kChainName = "chain";
inline constexpr const char* kDetectName = "detect";
inline constexpr const char* kSinkName = "sink";
inline constexpr const char* kFramesSinkName = "frames";
inline constexpr const char* kRecorderName = "recorder";
inline constexpr const char* kWhitenedTeeName = "whitened";  // after siftchain
inline constexpr const char* kDetectedTeeName = "detected";  // after siftdetect

// The names of a live view's appsink ("view-raw") and of the queue before it.
std::string view_sink_name(StreamView view);
std::string view_queue_name(StreamView view);

// What the host offers that a plan may use.
struct PlanOptions {
  bool nvenc_available = false;  // nvh264enc is registered (VideoEncoder::Auto picks it)
};

// A live view's branch: its queue and appsink, linked to the tee named `tap`.
struct ViewBranch {
  StreamView view = StreamView::Raw;
  std::string tap;
  std::vector<ElementSpec> elements;
};

struct PipelinePlan {
  std::string name;  // the config's pipeline name
  // The source as a gst-launch-1.0 description whose last element gives the frames; parsed
  // into a bin (gst_parse_bin_from_description), so sources with pads that appear later
  // (rtspsrc, decodebin) link as in gst-launch-1.0.
  std::string source_launch;
  bool live = true;                  // frames come at the source's pace (cameras, a live sky)
  bool loop_file = false;            // a video file played again from its start at its end (a seek)
  std::vector<ElementSpec> convert;  // source output -> the chain's input formats
  std::vector<ElementSpec> chain_line;     // chain-queue, [siftchain], [siftdetect], sink
  std::vector<ElementSpec> frames_branch;  // queue ! appsink: empty when no output needs frames
  std::vector<ElementSpec> video_branch;   // queue ! videoconvert ! encoder ! splitmuxsink
  std::vector<ViewBranch> view_branches;   // one per live view served
  std::string chain_output;                // the element whose src pad is the chain's output
  bool has_detect = false;                 // the chain ends with detect: detections are written

  // The main line as one gst-launch-1.0 text, for the log.
  std::string describe() const;
  // The chain line's element named `name`, or nullptr.
  const ElementSpec* find(const std::string& name) const;
};

// Throws Error naming the pipeline, the key and what is allowed when the config asks for
// something no element here can do (an image sequence other than PNG).
PipelinePlan plan_pipeline(const PipelineConfig& config, const PlanOptions& options = {});

// The source alone as a gst-launch-1.0 description (PipelinePlan::source_launch).
std::string source_launch(const SourceConfig& source, bool* live = nullptr);

// The stages siftchain runs and the one siftdetect runs: a final detect stage is split off.
struct ChainSplit {
  std::vector<StageConfig> chain;      // for siftchain; empty: no siftchain
  std::optional<DetectParams> detect;  // for siftdetect
};
ChainSplit split_chain(const ChainConfig& chain);

// siftdetect's properties for `params` (the detect stage's keys; the names are the same).
std::vector<std::pair<std::string, std::string>> detect_properties(const DetectParams& params);

// An H.264 encoder for `choice` (auto: NVENC when the host has it, else x264), tuned for
// latency: no B-frames, no look-ahead, a key frame at least every `key_interval` frames.
ElementSpec h264_encoder(VideoEncoder choice, int bitrate_kbps, int key_interval,
                         const PlanOptions& options);
// Frames in `seconds` at `fps` (25 fps when the rate is not known), at least 1.
int key_frame_interval(double fps, double seconds);

// True when some output wants the raw frames (FITS, the preview, a clip's cube): the plan
// then has a frames branch.
bool wants_raw_frames(const OutputsConfig& outputs);

// The frame rate the source's config names; 0 when it names none (the camera's own).
double nominal_fps(const SourceConfig& source);

// The caps text of a frame rate: "25/1", "30000/1001".
std::string fraction_text(const FrameRate& rate);

}  // namespace starsift::daemon
