// SPDX-License-Identifier: LGPL-2.1-or-later
// Detection's parameters: one struct, shared by YAML (`- detect: {...}`), siftdetect's
// properties, the CPU reference and the CUDA stage. docs/detect.md describes each step.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "pipeline/detect/labels.hpp"
#include "pipeline/detect/link_params.hpp"
#include "pipeline/pixel_format.hpp"

namespace starsift {

// Where a pixel's background level and noise come from.
enum class DetectBackground {
  Mesh,    // tiles of `mesh` px: sigma-clipped mean and sigma each, interpolated bilinearly
           // between tile centres (Source Extractor's method, without its median filter)
  Global,  // one sigma-clipped mean and sigma for the frame
  None,    // the input is already a significance image: its SignificanceScale's offset and
           // gain when the frame has one, else background 0, sigma 1
  Auto,    // none for a frame with a SignificanceScale (whitening's output: significance or
           // snr, so the threshold is in whitening's own per-pixel sigma), mesh otherwise
};

// What a stage does for frames of one shape: `background` resolved (never auto), and for
// none the constant level and noise.
struct DetectBackgroundPlan {
  DetectBackground background = DetectBackground::Mesh;
  float level = 0.0f;  // background: none
  float noise = 1.0f;  // background: none
  bool operator==(const DetectBackgroundPlan&) const = default;
};

// What the pixels are compared with before thresholding.
enum class DetectFilter {
  None,      // each pixel alone
  Default,   // Source Extractor's default 3 x 3 kernel {1 2 1, 2 4 2, 1 2 1}
  Gaussian,  // a Gaussian PSF of `fwhm` px (radius ceil(1.5 fwhm), at most kMaxFilterRadius)
};

enum class DetectThreshold {
  Sigma,     // a pixel is found where its filtered significance exceeds `threshold`
  Absolute,  // where its filtered value above the background exceeds `threshold`
};

// What the stage writes as its frame.
enum class DetectOutput {
  Input,    // the input frame, unchanged (the catalogue is the result)
  Labels,   // GRAY16: each pixel its object's id (0 background; ids above 65535 are clipped)
  Overlay,  // GRAY8: the input stretched to 8 bits with each object's box drawn at 255
};

struct DetectParams {
  static constexpr DetectBackground kDefaultBackground = DetectBackground::Auto;
  static constexpr int kDefaultMesh = 64;
  static constexpr int kMinMesh = 8;
  static constexpr int kMaxMesh = 4096;
  static constexpr DetectFilter kDefaultFilter = DetectFilter::Default;
  static constexpr double kDefaultFwhm = 2.0;
  static constexpr int kMaxFilterRadius = 7;
  static constexpr DetectThreshold kDefaultThresholdMode = DetectThreshold::Sigma;
  // Chosen by measurement (docs/detect.md, "The default threshold"): after whitening's
  // defaults, the lowest threshold with at most 0.1 false detections per Mpix-frame away
  // from stars over the quality benchmark's grid; 4.25 gave 0.21.
  static constexpr double kDefaultThreshold = 4.5;
  static constexpr Connectivity kDefaultConnectivity = Connectivity::Eight;
  static constexpr int kDefaultMinArea = 3;
  static constexpr int kDefaultMaxObjects = 4096;
  static constexpr int kMaxMaxObjects = 1 << 20;
  static constexpr DetectOutput kDefaultOutput = DetectOutput::Input;
  // The line channel (line_channel.hpp): off by default; lines of odd length when on.
  static constexpr int kMinLineLength = 5;
  static constexpr int kMaxLineLength = 63;
  // Chosen by measurement (docs/detect.md, "The line channel"): after whitening, on the
  // default sky without movers, it adds 0.005 detections per Mpix-frame at length 15 and 0.03
  // at 31 to the point channel's 0.11; 5.0 added 0.22 at length 15.
  static constexpr double kDefaultLineThreshold = 5.5;
  // Sigma clipping of the background: `clip` sigmas, this many rounds.
  static constexpr double kClipSigma = 3.0;
  static constexpr int kClipRounds = 5;

  DetectBackground background = kDefaultBackground;
  int mesh = kDefaultMesh;  // tile side, px (background: mesh)
  DetectFilter filter = kDefaultFilter;
  double fwhm = kDefaultFwhm;  // px (filter: gaussian)
  DetectThreshold threshold_mode = kDefaultThresholdMode;
  double threshold = kDefaultThreshold;
  Connectivity connectivity = kDefaultConnectivity;
  int min_area = kDefaultMinArea;        // objects of fewer pixels are dropped
  int max_objects = kDefaultMaxObjects;  // catalogue capacity: the rest counted as overflow
  DetectOutput output = kDefaultOutput;
  // A pixel is also found where the significance summed along the best line of `line_length`
  // px through it exceeds `line_threshold` (sigma): faint streaks. 0: off. Sigma mode only.
  int line_length = 0;
  double line_threshold = kDefaultLineThreshold;
  // The host's steps on each frame's catalogue, in frame order: the streak merge and the
  // tracker (detection_linker.hpp). The stages themselves never read them.
  DetectLinkParams link;

  // Throws Error naming the parameter (by its YAML key), the value and the allowed range.
  void validate() const;
  // Also checks the frame shape: a grey format.
  void validate_for(const FrameShape& shape) const;

  bool operator==(const DetectParams&) const = default;
};

// GRAY8, GRAY16_LE (any bit depth) and GRAY32F.
bool detect_supports(PixelFormat format) noexcept;

// The background for frames of `shape` (DetectBackground::Auto and None resolved).
DetectBackgroundPlan detect_background_plan(const DetectParams& params,
                                            const FrameShape& shape) noexcept;

// The frames the stage writes for input frames of `in`.
FrameShape detect_output_shape(const DetectParams& params, const FrameShape& in) noexcept;

// True when `to` differs from `from` only in what a running stage takes from the next frame
// without new buffers (everything but output and max-objects, which size them).
bool detect_live_change(const DetectParams& from, const DetectParams& to) noexcept;

std::string_view to_string(DetectBackground value) noexcept;
std::string_view to_string(DetectFilter value) noexcept;
std::string_view to_string(DetectThreshold value) noexcept;
std::string_view to_string(DetectOutput value) noexcept;
DetectBackground parse_detect_background(std::string_view name);
DetectFilter parse_detect_filter(std::string_view name);
DetectThreshold parse_detect_threshold(std::string_view name);
DetectOutput parse_detect_output(std::string_view name);
Connectivity parse_connectivity(std::string_view name);
std::string detect_background_names();
std::string detect_filter_names();
std::string detect_threshold_names();
std::string detect_output_names();

}  // namespace starsift
