// SPDX-License-Identifier: LGPL-2.1-or-later
// Links each frame's detections into tracks of objects moving at constant velocity, on the
// host. Model, association and parameters: docs/detect.md, "Tracks".
//
// Units: positions in px with the catalogue's convention (0-based, (0, 0) the centre of the
// first pixel, x the fast axis); velocities in px/frame, where a frame is one step of the
// frame numbers given to update(), and in px/s from the frames' timestamps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "pipeline/detect/catalogue.hpp"

namespace starsift {

struct TrackerParams {
  static constexpr double kDefaultGate = 3.0;
  static constexpr double kMaxGate = 1000.0;
  static constexpr int kDefaultConfirm = 3;
  static constexpr int kMaxConfirm = 100;
  static constexpr int kDefaultCoast = 2;
  static constexpr int kMaxCoast = 1000;
  static constexpr int kDefaultMaxTracks = 1024;
  static constexpr int kMaxMaxTracks = 1 << 20;
  static constexpr double kDefaultMinSpeed = 0.0;
  static constexpr double kDefaultMaxSpeed = 10.0;
  static constexpr double kMaxMaxSpeed = 10000.0;
  static constexpr int kDefaultFitWindow = 8;
  static constexpr int kMinFitWindow = 2;
  static constexpr int kMaxFitWindow = 64;
  static constexpr int kDefaultTail = 0;
  static constexpr int kMaxTail = 256;

  // How far (px) a detection may lie from a track's predicted position and still be linked
  // to it [3]. Several times the centroids' noise (0.1-0.5 px): a larger gate admits more
  // false links among dense detections, a smaller one loses movers whose centroids scatter.
  double gate = kDefaultGate;
  // Detections a track needs before it is confirmed [3], 1..100. A track is tentative
  // until then; it ends at its first frame without a detection while it has one detection,
  // and at its second in a row once it has a velocity (two or more).
  int confirm = kDefaultConfirm;
  // Frames without a detection a confirmed track survives, coasting on its prediction [2],
  // 0..1000; it ends at the next miss.
  int coast = kDefaultCoast;
  // Tracks alive at once, every state counted [1024], 1..2^20: a detection that would start
  // a track when all are in use starts none and is counted in TrackerCounters::overflow.
  // Storage for this many is reserved at construction.
  int max_tracks = kDefaultMaxTracks;
  // Speed (px/frame) below which a confirmed track is not reported as a mover [0: report
  // every confirmed track]: stars that leak through detection stay put. The tracker still
  // follows such tracks, so a star's detections are taken by its track rather than starting
  // new ones every frame. Set it well above the speed noise of a fit over `confirm`
  // detections, sigma * sqrt(12 / (n (n^2 - 1))) per axis for centroid noise sigma.
  double min_speed = kDefaultMinSpeed;
  // The largest motion (px/frame) a new track's second detection may show [10]: a track
  // with one detection has no velocity yet, so its second detection is looked for within
  // gate + max_speed * (frames since the first) of the first. Faster objects start no
  // track; a larger value lets more pairs of false detections start one.
  double max_speed = kDefaultMaxSpeed;
  // Detections, the latest ones, in the least-squares fit of position and velocity [8],
  // 2..64: more smooths the centroid noise further, fewer follows a curving path sooner.
  int fit_window = kDefaultFitWindow;
  // Positions kept per track for display, its latest ones [0: none], 0..256 (Tracker::tail()):
  // each update() adds the track's position in that frame. Reserved at construction,
  // max_tracks * tail * 8 bytes (128 KiB for 1024 tracks of 16).
  int tail = kDefaultTail;

  // Throws Error naming the parameter, the value and what is allowed.
  void validate() const;

  bool operator==(const TrackerParams&) const = default;
};

enum class TrackState : std::uint8_t {
  Tentative,  // fewer than `confirm` detections, at most one update missed between two
  Confirmed,  // `confirm` detections reached, detected in this frame
  Coasting,   // confirmed, not detected in this frame (at most `coast` frames in a row)
};

std::string_view to_string(TrackState state) noexcept;

// One track as it stands after the latest update().
struct Track {
  // The mover's number: 0, 1, 2, ... in the order tracks are first reported as movers;
  // never given to another track in the tracker's life (reset() included). -1 for a track
  // never reported (tentative, or confirmed but slower than min_speed so far).
  std::int32_t id = -1;
  TrackState state = TrackState::Tentative;
  // Reported as a mover in this frame: confirmed or coasting, and at least min_speed fast.
  // Exactly the tracks of Tracker::tracks().
  bool mover = false;
  // Position (px) in this frame: the fit's value where the track was detected, its
  // prediction where it is coasting.
  float x = 0.0f, y = 0.0f;
  // Velocity (px/frame): the slope of the fit of position against frame number; 0 with a
  // single detection.
  float vx = 0.0f, vy = 0.0f;
  // Velocity (px/s): the slope of the fit of position against the detections' timestamps;
  // 0 with a single detection or when the timestamps in the fit do not advance.
  float vx_s = 0.0f, vy_s = 0.0f;
  std::uint32_t detections = 0;   // detections linked to it since it started, all of them
  std::uint32_t missed = 0;       // frames since its last detection: 0 when detected now
  float mean_flux = 0.0f;         // mean DetectedObject::flux of those detections
  std::uint64_t first_frame = 0;  // frame of its first detection
  std::uint64_t last_frame = 0;   // frame of its latest detection
  // Index of its detection in this frame's span, -1 when it was not detected in this frame.
  std::int32_t detection = -1;
};

// One position of a track's tail (Tracker::tail()), px.
struct TrackPoint {
  float x = 0.0f, y = 0.0f;
};

// What a user needs to judge false tracks; every count since construction or reset().
struct TrackerCounters {
  std::uint64_t frames = 0;              // update() calls
  std::uint64_t detections = 0;          // detections given
  std::uint64_t invalid_detections = 0;  // non-finite centroids, ignored (track -1)
  std::uint64_t tracks_started = 0;      // tentative tracks started
  std::uint64_t tracks_confirmed = 0;    // tracks that reached `confirm` detections
  std::uint64_t tentative_dropped = 0;   // tracks that ended before confirmation
  std::uint64_t confirmed_ended = 0;     // confirmed tracks that ended (missed > coast)
  std::uint64_t movers_reported = 0;     // tracks given an id: reported at least once
  std::uint64_t overflow = 0;            // detections that started no track: max_tracks in use
};

class Tracker {
 public:
  // Validates `params` (throws Error) and reserves storage for params.max_tracks tracks.
  explicit Tracker(const TrackerParams& params = {});

  const TrackerParams& params() const noexcept { return params_; }

  // Ends every track without counting it and zeroes the counters; ids go on from where
  // they were, so an id is never given twice.
  void reset();

  // Links `detections`, the catalogue of frame `frame` taken at `timestamp_ns`, to the
  // tracks, and sets each one's `track`: the id of the track it was linked to when that
  // track is reported as a mover in this frame (tracks() holds it), otherwise -1 (it
  // started or extended a tentative track, extended a track slower than min_speed, found
  // no free track, or had a non-finite centroid). Frame numbers must increase from call
  // to call (a skipped number counts as a frame without detections); throws Error
  // otherwise, changing nothing. Allocates nothing once the storage has grown to the
  // largest frame seen (tracks are reserved up front).
  void update(std::uint64_t frame, std::int64_t timestamp_ns, std::span<DetectedObject> detections);

  // The movers of the latest frame: confirmed or coasting tracks at least min_speed fast,
  // by increasing id. Valid until the next update() or reset().
  std::span<const Track> tracks() const noexcept { return reported_; }
  // Every live track of the latest frame, movers or not (tentative, slow), in the order
  // they started. Valid until the next update() or reset().
  std::span<const Track> live_tracks() const noexcept { return live_; }

  // The latest positions of the mover tracks()[mover], oldest first, at most params().tail
  // of them and at most out.size(): Track::x, y of each update() since the track started,
  // its tentative frames included (where it was detected: the fit's value; where it
  // coasted: the prediction). Copied into `out`; returns how many. Valid until the next
  // update() or reset().
  std::size_t tail(std::size_t mover, std::span<TrackPoint> out) const noexcept;

  const TrackerCounters& counters() const noexcept { return counters_; }

  // Bytes the tracker holds: constant from frame to frame once the largest catalogue has
  // been seen, which is how tests check that updates allocate nothing.
  std::size_t capacity_bytes() const noexcept;

 private:
  // One detection in a track's fit window.
  struct Sample {
    std::uint64_t frame;
    std::int64_t timestamp_ns;
    double x, y;
  };
  // A live track's working state, in a fixed slot: its public view plus its fit window.
  struct Slot {
    Track track;
    double flux_sum = 0.0;
    int window_size = 0;  // samples in the window, up to fit_window
    int window_head = 0;  // index of the next sample to write
    // Fit of position against frame number: value at `ref_frame` and slope (px/frame).
    std::uint64_t ref_frame = 0;
    double fx = 0.0, fy = 0.0, fvx = 0.0, fvy = 0.0;
    // Position predicted for the frame being linked.
    double px = 0.0, py = 0.0;
    int tail_size = 0;  // positions in the tail ring, up to params_.tail
    int tail_head = 0;  // index of the next position to write
  };
  // A gated (track, detection) pair, sorted to link greedily.
  struct Candidate {
    int priority;  // 0: confirmed, 1: tentative with a velocity, 2: single detection
    double distance2;
    int live_index;
    int detection;
  };

  void start_track(int detection_index, std::uint64_t frame, std::int64_t timestamp_ns,
                   const DetectedObject& detection);
  void add_detection(Slot& slot, std::uint64_t frame, std::int64_t timestamp_ns,
                     const DetectedObject& detection);
  void fit(Slot& slot) const;
  Sample* window(int slot_index) noexcept;

  TrackerParams params_;
  TrackerCounters counters_;
  std::int32_t next_id_ = 0;
  bool have_frame_ = false;
  std::uint64_t last_frame_ = 0;

  std::vector<Slot> slots_;            // max_tracks of them
  std::vector<Sample> samples_;        // fit_window samples per slot
  std::vector<TrackPoint> tails_;      // tail positions per slot (a ring each)
  std::vector<int> free_slots_;        // slots not in use, taken from the back
  std::vector<int> live_slots_;        // slots in use, in the order their tracks started
  std::vector<Candidate> candidates_;  // this frame's gated pairs
  std::vector<char> track_linked_;     // per live track: linked in this frame
  std::vector<char> detection_used_;   // per detection: linked in this frame
  std::vector<int> by_x_;              // this frame's usable detections in x order
  std::vector<Track> live_;
  std::vector<Track> reported_;
  std::vector<int> reported_slots_;  // the slot of each reported_ track
};

}  // namespace starsift
