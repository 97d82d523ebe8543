// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/detect/streak_merge.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "pipeline/error.hpp"
#include "pipeline/param_checks.hpp"

namespace starsift {

namespace {

// |a - b| modulo pi, in [0, pi/2]: position angles of axes, which have no sense.
double axis_angle_difference(double a, double b) {
  double d = std::fmod(std::fabs(a - b), std::numbers::pi);
  return std::min(d, std::numbers::pi - d);
}

// Where the point (x, y) lies along the axis through (cx, cy) at angle theta.
double along(double x, double y, double cx, double cy, double cos_t, double sin_t) {
  return (x - cx) * cos_t + (y - cy) * sin_t;
}

// The smaller and larger projections of a record's end points on an axis.
struct Span {
  double lo, hi;
};

Span end_point_span(const DetectedObject& o, double cx, double cy, double cos_t, double sin_t) {
  const double s = along(o.x_start, o.y_start, cx, cy, cos_t, sin_t);
  const double e = along(o.x_end, o.y_end, cx, cy, cos_t, sin_t);
  return {std::min(s, e), std::max(s, e)};
}

// The moments finalize_object() stored, without the 1/12 it added to singular ones: what the
// pixels themselves give, so that combining them is exact.
struct Moments {
  double x2, y2, xy;
};

Moments pixel_moments(const DetectedObject& o) {
  const double pad = (o.flags & kObjectSingular) != 0 ? 1.0 / 12.0 : 0.0;
  return {o.x2 - pad, o.y2 - pad, o.xy};
}

std::uint32_t find_root(std::vector<std::uint32_t>& parent, std::uint32_t i) {
  while (parent[i] != i) {
    parent[i] = parent[parent[i]];  // path halving
    i = parent[i];
  }
  return i;
}

// Unites the groups of records a and b; the root is the smaller index, so the groups and their
// roots do not depend on the order the pairs are met in. Returns whether they were apart.
bool unite(std::vector<std::uint32_t>& parent, std::uint32_t a, std::uint32_t b) {
  const std::uint32_t ra = find_root(parent, a), rb = find_root(parent, b);
  if (ra == rb) return false;
  parent[std::max(ra, rb)] = std::min(ra, rb);
  return true;
}

// How far from its centroid a piece may meet another: its end points' extent, the gap
// streak_pieces_join() allows for its own length, and its rms extent a, which bounds how wide
// it lies across another piece's axis (the offset allowed grows by that width). Two records
// join only when their centroids lie within reach(p) + reach(q) + max-offset + kReachMargin:
// along the reference's axis the other's centroid lies within both end-point spans and the gap
// (a centroid lies between its own end points), across it within max-offset plus the other's
// width; the margin covers float rounding.
double piece_reach(const DetectedObject& o, const StreakMergeParams& params) {
  const double extent = std::hypot(static_cast<double>(o.x_end) - o.x_start,
                                   static_cast<double>(o.y_end) - o.y_start);
  return extent + params.max_gap * o.length + o.a;
}
constexpr double kReachMargin = 2.0;
// Pieces that reach further than this are compared with every candidate rather than swept:
// one meteor's reach would otherwise widen every sweep window to its own.
constexpr double kSweepReach = 64.0;
// Up to this many pieces of trusted axis (a frame's streaks and meteors), each scans every
// fragment; beyond, the fragments are sorted by x first. A raw star field holds tens of
// thousands of fragments (its stars): with them sorted, merging a meteor's pieces among 50 000
// records took 7.5 ms a frame on the 2-core development VM, with the scans 1.2 ms.
constexpr std::size_t kScanTrusted = 32;

// a / b: how well a record's axis is known. Its direction from the second moments is uncertain
// by about b / a rad, so the more elongated of two pieces gives the line they are tested on.
// True when p's is the better known: the more elongated, then the longer, then the earlier
// record, so that the test does not depend on the order of its arguments. Compared as
// a_p b_q against a_q b_p (b is never negative; 0 is a line, the best known).
bool better_axis(const DetectedObject& p, const DetectedObject& q) {
  const double lp = static_cast<double>(p.a) * q.b, lq = static_cast<double>(q.a) * p.b;
  if (lp != lq) return lp > lq;
  if (p.length != q.length) return p.length > q.length;
  return p.id <= q.id;
}

// A piece whose axis is known to max_angle or better (a / b >= 1 / max_angle): a line along
// which a short piece of poorly known angle, or a fragment with none, can be placed.
bool trusted_axis(const DetectedObject& o, const StreakMergeParams& params) {
  return static_cast<double>(o.a) * params.max_angle >= o.b;
}

// The rms width of o across the direction (cos_t, sin_t): its second moments along the normal.
double width_across(const DetectedObject& o, double cos_t, double sin_t) {
  const double v = static_cast<double>(o.x2) * sin_t * sin_t -
                   2.0 * static_cast<double>(o.xy) * sin_t * cos_t +
                   static_cast<double>(o.y2) * cos_t * cos_t;
  return std::sqrt(std::max(v, 0.0));
}

// A fragment may be as wide across the trail's line as this many times the trail's own b:
// a fragment is a slice of the trail's profile, whose measured width scatters with its few
// pixels; a star is wider than the thin core a faint trail leaves above the threshold.
constexpr double kFragmentWidth = 1.5;

}  // namespace

bool is_streak_fragment(const DetectedObject& o) noexcept {
  return o.flux > 0.0f && (o.flags & kObjectNoFlux) == 0 && std::isfinite(o.x) &&
         std::isfinite(o.y) && std::isfinite(o.theta) && std::isfinite(o.x2) &&
         std::isfinite(o.y2) && std::isfinite(o.xy) && std::isfinite(o.length) &&
         std::isfinite(o.a) && std::isfinite(o.b);
}

bool is_streak_piece(const DetectedObject& o, const StreakMergeParams& params) noexcept {
  if (!is_streak_fragment(o)) return false;  // a piece is a fragment long and elongated enough
  // b is never 0 after finalize_object()'s guard; a record without it is a line.
  const bool elongated = o.b > 0.0f ? o.a >= params.min_elongation * o.b : o.a > 0.0f;
  return elongated && o.length >= params.min_length;
}

namespace {

// streak_pieces_join() on records already sorted into pieces and fragments (p_piece, q_piece;
// at least one a piece, the other a piece or a fragment): merge_streaks() knows which, and
// spares every pair the tests.
bool classified_join(const DetectedObject& p, bool p_piece, const DetectedObject& q, bool q_piece,
                     const StreakMergeParams& params) noexcept {
  const bool both = p_piece && q_piece;
  // The cheap tests first: most pairs a sweep meets point different ways. Pointing apart, the
  // shorter must fit the band (sin(angle) >= 2 angle / pi on [0, pi/2]).
  const double angle = both ? axis_angle_difference(p.theta, q.theta) : 0.0;
  const bool aligned = both && angle <= params.max_angle;
  if (both && !aligned &&
      ((!trusted_axis(p, params) && !trusted_axis(q, params)) ||
       std::min(p.length, q.length) * angle / std::numbers::pi > params.max_offset)) {
    return false;
  }
  // The reference: the piece whose axis is the better known. A crossing of two trails, or a
  // piece widened by a star, is wide for its length: its axis is neither trail's line, and
  // the clean pieces of each trail are measured against their own line instead.
  const bool p_ref = both ? better_axis(p, q) : p_piece;
  const DetectedObject& ref = p_ref ? p : q;
  const DetectedObject& other = p_ref ? q : p;
  if (!aligned && (!trusted_axis(ref, params) ||
                   (both && other.length * angle / std::numbers::pi > params.max_offset))) {
    return false;
  }
  const double c = std::cos(static_cast<double>(ref.theta));
  const double s = std::sin(static_cast<double>(ref.theta));
  const double offset = std::fabs(-(other.x - ref.x) * s + (other.y - ref.y) * c);
  Span o{};
  if (aligned) {
    // What the other is wider across the line than the reference, it may lie off it: a
    // crossing blob's centroid is pulled off the trail by the other trail's arm.
    const double wider = std::max(width_across(other, c, s) - ref.b, 0.0);
    if (!(offset <= params.max_offset + wider)) return false;
    o = end_point_span(other, ref.x, ref.y, c, s);
  } else if (both) {
    // A short piece's angle is poorly measured: it joins a trusted line when all of it, its
    // end points at its own angle, lies within max_offset of that line.
    if (!(offset + 0.5 * other.length * std::sin(angle) <= params.max_offset)) return false;
    o = end_point_span(other, ref.x, ref.y, c, s);
  } else {
    // A fragment (too short or too round to be a piece: a few pixels the noise left of the
    // trail) joins a trusted line when it lies on it: centroid within half max_offset, no
    // wider across the line than the trail. A star is wider, or off the line.
    if (!(offset <= 0.5 * params.max_offset)) return false;
    if (!(width_across(other, c, s) <= kFragmentWidth * ref.b)) return false;
    const double t = along(other.x, other.y, ref.x, ref.y, c, s);
    o = {t, t};
  }
  const Span r = end_point_span(ref, ref.x, ref.y, c, s);
  const double gap = std::max(o.lo - r.hi, r.lo - o.hi);  // negative where they overlap
  return gap <= params.max_gap * (static_cast<double>(p.length) + q.length);
}

}  // namespace

bool streak_pieces_join(const DetectedObject& p, const DetectedObject& q,
                        const StreakMergeParams& params) noexcept {
  const bool p_piece = is_streak_piece(p, params), q_piece = is_streak_piece(q, params);
  if (!p_piece && !q_piece) return false;
  if (!(p_piece && q_piece) && !is_streak_fragment(p_piece ? q : p)) return false;
  return classified_join(p, p_piece, q, q_piece, params);
}

DetectedObject merge_streak_pieces(const DetectedObject* const* pieces, std::size_t n) {
  const DetectedObject& first = *pieces[0];
  DetectedObject m = first;
  double flux = 0.0, var = 0.0, fx = 0.0, fy = 0.0;
  std::uint32_t npix = 0;
  std::uint32_t flags = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const DetectedObject& o = *pieces[k];
    npix += o.npix;
    flux += o.flux;
    var += static_cast<double>(o.flux_err) * o.flux_err;
    fx += static_cast<double>(o.flux) * o.x;
    fy += static_cast<double>(o.flux) * o.y;
    m.xmin = std::min(m.xmin, o.xmin);
    m.xmax = std::max(m.xmax, o.xmax);
    m.ymin = std::min(m.ymin, o.ymin);
    m.ymax = std::max(m.ymax, o.ymax);
    // The larger peak, the first in raster order on a tie (as detection chooses within one).
    if (o.peak > m.peak ||
        (o.peak == m.peak && (o.ypeak < m.ypeak || (o.ypeak == m.ypeak && o.xpeak < m.xpeak)))) {
      m.peak = o.peak;
      m.xpeak = o.xpeak;
      m.ypeak = o.ypeak;
    }
    flags |= o.flags & (kObjectTouchesEdge | kObjectMerged);
  }
  const double xc = fx / flux, yc = fy / flux;
  // Parallel-axis theorem: each piece's moments about its centroid plus its centroid's offset
  // from the combined one, weighted by flux, are the moments of the union of the pixels.
  // The centroid errors the same way, sum v (x - xc)^2 over the pieces, where each piece's
  // own sum about its centroid is (x_err flux)^2 and its offset adds var (x_i - xc)^2; exact
  // when each piece's noise-weighted centre is its flux centroid (uniform noise across it).
  double x2 = 0.0, y2 = 0.0, xy = 0.0, ex = 0.0, ey = 0.0;
  for (std::size_t k = 0; k < n; ++k) {
    const DetectedObject& o = *pieces[k];
    const Moments mo = pixel_moments(o);
    const double dx = o.x - xc, dy = o.y - yc, w = o.flux;
    x2 += w * (mo.x2 + dx * dx);
    y2 += w * (mo.y2 + dy * dy);
    xy += w * (mo.xy + dx * dy);
    const double v = static_cast<double>(o.flux_err) * o.flux_err;
    const double sx = static_cast<double>(o.x_err) * o.flux,
                 sy = static_cast<double>(o.y_err) * o.flux;
    ex += sx * sx + v * dx * dx;
    ey += sy * sy + v * dy * dy;
  }
  x2 /= flux;
  y2 /= flux;
  xy /= flux;
  // finalize_object()'s guard and ellipse (object_sums.hpp), on the combined moments.
  if (x2 * y2 - xy * xy < 1.0 / 144.0) {
    x2 += 1.0 / 12.0;
    y2 += 1.0 / 12.0;
    flags |= kObjectSingular;
  }
  const double half_diff = 0.5 * (x2 - y2);
  const double root = std::sqrt(half_diff * half_diff + xy * xy);
  const double mean = 0.5 * (x2 + y2);
  const double a = std::sqrt(mean + root);
  const double b = std::sqrt(std::max(mean - root, 0.0));
  const double theta = 0.5 * std::atan2(2.0 * xy, x2 - y2);
  // A broken trail's extent is where its outermost pieces end, gaps included: the moments of
  // a line with holes would misstate it.
  const double c = std::cos(theta), s = std::sin(theta);
  double lo = HUGE_VAL, hi = -HUGE_VAL;
  for (std::size_t k = 0; k < n; ++k) {
    const Span span = end_point_span(*pieces[k], xc, yc, c, s);
    lo = std::min(lo, span.lo);
    hi = std::max(hi, span.hi);
  }
  m.npix = npix;
  m.flux = static_cast<float>(flux);
  m.flux_err = static_cast<float>(std::sqrt(var));
  m.x = static_cast<float>(xc);
  m.y = static_cast<float>(yc);
  m.x_err = static_cast<float>(std::sqrt(ex) / flux);
  m.y_err = static_cast<float>(std::sqrt(ey) / flux);
  m.x2 = static_cast<float>(x2);
  m.y2 = static_cast<float>(y2);
  m.xy = static_cast<float>(xy);
  m.a = static_cast<float>(a);
  m.b = static_cast<float>(b);
  m.theta = static_cast<float>(theta);
  m.elongation = b > 0.0 ? static_cast<float>(a / b) : 0.0f;
  m.length = static_cast<float>(hi - lo);
  m.x_start = static_cast<float>(xc + lo * c);
  m.y_start = static_cast<float>(yc + lo * s);
  m.x_end = static_cast<float>(xc + hi * c);
  m.y_end = static_cast<float>(yc + hi * s);
  m.flags = flags | kObjectStreakMerged;
  m.track = -1;
  return m;
}

std::size_t merge_streaks(std::vector<DetectedObject>& catalogue, const StreakMergeParams& params,
                          StreakMergeScratch& scratch, std::vector<std::uint32_t>* new_ids) {
  const auto n = static_cast<std::uint32_t>(catalogue.size());
  scratch.candidates.clear();
  scratch.fragments_by_x.clear();
  for (std::uint32_t i = 0; i < n; ++i) {
    if (is_streak_piece(catalogue[i], params))
      scratch.candidates.push_back(i);
    else if (is_streak_fragment(catalogue[i]))
      scratch.fragments_by_x.push_back(i);
  }
  if (scratch.candidates.empty()) return 0;
  scratch.parent.resize(n);
  for (std::uint32_t i = 0; i < n; ++i) scratch.parent[i] = i;
  // The pairs that can join (piece_reach()): the short-reach candidates swept in x order, each
  // compared with those whose centroid lies within reach in x; the long-reach ones with every
  // candidate. Thousands of elongated noise blobs thus cost a sweep, not every pair. The groups
  // are those of testing every pair: the same unions, in another order.
  scratch.reach.assign(n, 0.0);
  scratch.short_by_x.clear();
  scratch.long_reach.clear();
  scratch.trusted.clear();
  double short_reach_max = 0.0;
  for (const std::uint32_t i : scratch.candidates) {
    const double reach = piece_reach(catalogue[i], params);
    scratch.reach[i] = reach;
    if (reach <= kSweepReach) {
      scratch.short_by_x.push_back(i);
      short_reach_max = std::max(short_reach_max, reach);
    } else {
      scratch.long_reach.push_back(i);
    }
    if (trusted_axis(catalogue[i], params)) scratch.trusted.push_back(i);
  }
  auto by_x = [&](std::uint32_t a, std::uint32_t b) {
    return catalogue[a].x < catalogue[b].x || (catalogue[a].x == catalogue[b].x && a < b);
  };
  std::sort(scratch.short_by_x.begin(), scratch.short_by_x.end(), by_x);
  bool joined = false;
  // Piece b (fragment: b_piece false) against piece a.
  auto test = [&](std::uint32_t a, std::uint32_t b, bool b_piece = true) {
    if (classified_join(catalogue[a], true, catalogue[b], b_piece, params)) {
      joined = unite(scratch.parent, a, b) || joined;
    }
  };
  const std::vector<std::uint32_t>& s = scratch.short_by_x;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const double window = scratch.reach[s[i]] + short_reach_max + params.max_offset + kReachMargin;
    for (std::size_t j = i + 1; j < s.size(); ++j) {
      if (catalogue[s[j]].x - catalogue[s[i]].x > window) break;
      test(s[i], s[j]);
    }
  }
  const std::vector<std::uint32_t>& l = scratch.long_reach;
  for (std::size_t i = 0; i < l.size(); ++i) {
    for (std::size_t j = i + 1; j < l.size(); ++j) test(l[i], l[j]);
    for (const std::uint32_t k : s) test(l[i], k);
  }
  // Fragments join only pieces of trusted axis (a few long ones a frame): each such piece
  // against the fragments whose centroid lies within reach in x.
  if (!scratch.trusted.empty() && !scratch.fragments_by_x.empty()) {
    std::vector<std::uint32_t>& f = scratch.fragments_by_x;
    // Few trusted pieces: each scans every fragment for those on its line (a necessary
    // condition of the join, and all the test a fragment far from every line costs). Many:
    // the fragments sorted by x, each piece a window of them.
    const bool scan = scratch.trusted.size() <= kScanTrusted;
    double fragment_reach_max = 0.0;
    if (!scan) {
      for (const std::uint32_t k : f) {
        scratch.reach[k] = piece_reach(catalogue[k], params);
        fragment_reach_max = std::max(fragment_reach_max, scratch.reach[k]);
      }
      std::sort(f.begin(), f.end(), by_x);
    }
    for (const std::uint32_t i : scratch.trusted) {
      const double x = catalogue[i].x;
      // streak_pieces_join()'s own first test, with this piece's axis computed once.
      const double c = std::cos(static_cast<double>(catalogue[i].theta));
      const double sn = std::sin(static_cast<double>(catalogue[i].theta));
      const double y = catalogue[i].y;
      const auto on_line = [&](std::uint32_t k) {
        const double offset = std::fabs(-(catalogue[k].x - x) * sn + (catalogue[k].y - y) * c);
        if (offset <= 0.5 * params.max_offset + kReachMargin) test(i, k, false);
      };
      if (scan) {
        for (const std::uint32_t k : f) on_line(k);
        continue;
      }
      const double window =
          scratch.reach[i] + fragment_reach_max + params.max_offset + kReachMargin;
      auto k = std::lower_bound(f.begin(), f.end(), x - window,
                                [&](std::uint32_t a, double v) { return catalogue[a].x < v; });
      for (; k != f.end() && catalogue[*k].x <= x + window; ++k) on_line(*k);
    }
  }
  if (!joined) return 0;
  // Each group as a list in index order, root first: the root is its smallest index, so it
  // is met before its other pieces.
  scratch.next.assign(n, n);  // n: the group's last piece
  scratch.last.assign(n, n);
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t r = find_root(scratch.parent, i);
    if (r != i) scratch.next[scratch.last[r]] = i;
    scratch.last[r] = i;
  }
  if (new_ids != nullptr) {
    std::uint32_t largest = 0;
    for (const DetectedObject& o : catalogue) largest = std::max(largest, o.id);
    new_ids->assign(static_cast<std::size_t>(largest) + 1, 0);
  }
  std::size_t out = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (scratch.parent[i] != i) continue;  // a piece of an earlier record
    const auto id = static_cast<std::uint32_t>(out + 1);
    DetectedObject record = catalogue[i];
    if (scratch.next[i] != n) {
      scratch.pieces.clear();
      for (std::uint32_t k = i; k != n; k = scratch.next[k]) {
        scratch.pieces.push_back(&catalogue[k]);
        if (new_ids != nullptr) (*new_ids)[catalogue[k].id] = id;
      }
      record = merge_streak_pieces(scratch.pieces.data(), scratch.pieces.size());
    } else if (new_ids != nullptr) {
      (*new_ids)[record.id] = id;
    }
    record.id = id;
    // out <= i, and every piece still to be read lies beyond i: nothing unread is overwritten.
    catalogue[out++] = record;
  }
  const std::size_t removed = catalogue.size() - out;
  catalogue.resize(out);
  return removed;
}

std::size_t merge_streaks(std::vector<DetectedObject>& catalogue, const StreakMergeParams& params) {
  StreakMergeScratch scratch;
  return merge_streaks(catalogue, params, scratch);
}

}  // namespace starsift
