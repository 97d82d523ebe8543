// SPDX-License-Identifier: LGPL-2.1-or-later
// One cell of the grid in one scene: its sky sequence rendered frame by frame, every method
// and every shipped chain run on every frame, and from the first scored frame on the raw
// material of the scores: each mover's best peak, every false-alarm candidate, the noise and
// the star leakage; each chain's hits, false detections and tracks at every threshold run.
// Nothing here chooses a threshold: summary.hpp does, over all cells afterwards.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "app/quality/chain_run.hpp"
#include "app/quality/config.hpp"
#include "app/quality/frame_layout.hpp"
#include "pipeline/detect/psf_kernel.hpp"
#include "pipeline/plane.hpp"
#include "pipeline/sky/sky_truth.hpp"
#include "pipeline/thread_pool.hpp"

namespace starsift::quality {

// One mover in one scored frame, with its mid-exposure truth inside the scored interior.
struct MoverTrial {
  std::uint64_t mover_id = 0;
  int frame = 0;
  // Its ideal single-frame matched-filter SNR: flux * sqrt(sum P^2) / sigma_e, P the PSF
  // integrated over pixels for a source on a pixel centre, sigma_e the background noise at
  // its position (sky and read noise, e-; the truth's noise_sigma_e).
  float ideal_snr = 0.0f;
  // What our point-source filter K gives on the noise-free mover (its streak, where it is)
  // at the pixel nearest its truth, over sigma_e sqrt(sum K^2): the best any background
  // subtraction can hand this detector (streak and sub-pixel position included).
  float filter_snr = 0.0f;
};

struct MethodSamples {
  std::vector<float> best;           // per trial: highest peak in its hit zone (-inf: none)
  std::vector<float> best_unmasked;  // the same among the peaks outside the bright-star mask
  std::vector<float> at_truth;       // per trial: the SNR image at the pixel nearest the truth
  std::vector<float> false_alarms;   // SNR of every candidate peak in no hit zone
  std::vector<unsigned char> false_alarm_masked;  // 1: inside the bright-star mask
  std::vector<Place> false_alarm_places;
  std::vector<float> snr_sigma;  // per frame: robust sigma of the SNR image (interior)
  // Methods with their own variance map (whitening): the same two with one robust sigma of
  // the residual per frame instead, as the baselines are filtered, to tell what the map costs.
  std::vector<float> at_truth_frame_sigma;
  std::vector<float> snr_sigma_frame_sigma;
  std::vector<float> noise_ratio;   // per frame: robust sigma of residual / frame sigma (quiet)
  std::vector<float> noise_floor;   // per frame: the method's floor
  std::vector<float> shift_error;   // per frame: |measured - true shift| (methods that measure)
  std::vector<float> leakage;       // per bright star and frame: max |residual| / sigma near it
  std::vector<float> leakage_null;  // the same around quiet spots
  double seconds = 0.0;             // in the method and its matched filter, over all frames
};

struct CellResult {
  Cell cell;
  std::vector<MoverTrial> trials;
  std::vector<MethodSamples> methods;  // in the config's methods' order
  std::vector<ChainSamples> chains;    // the shipped chains, in the config's order
  double area_mpix_frames = 0.0;       // the scored interior over the scored frames
  double masked_mpix_frames = 0.0;     // the part of it inside the bright-star mask
  int distinct_movers = 0;
  int bright_stars = 0;  // distinct stars that gave leakage samples
  int stars = 0;
  int hot_pixels = 0;
  double mean_motion = 0.0;  // px: the field's largest move within the history, averaged
};

// The first scored frame of the picture cell: input and residuals, for the PNGs.
struct PictureFrame {
  int frame = 0;
  double snr = 0.0;  // the cell's
  double speed = 0.0;
  std::vector<std::uint16_t> input;     // GRAY16 as rendered
  std::vector<Plane> residuals;         // the config's methods' order, ADU
  std::vector<std::string_view> names;  // their methods' names (static strings)
  std::vector<MoverTruth> movers;
  double sigma_adu = 0.0;  // the background noise at the frame's centre
};

CellResult run_cell(const QualityConfig& config, const SceneSpec& scene, const Cell& cell,
                    const PsfKernel& kernel, ThreadPool& pool, PictureFrame* picture = nullptr);

}  // namespace starsift::quality
