// SPDX-License-Identifier: LGPL-2.1-or-later
// The Gaussian's launcher: the path for the parameters, the scratch, the checks.

#include <algorithm>

#include "cuda/gauss/gauss.cuh"
#include "cuda/gauss/gauss_internal.cuh"
#include "pipeline/gauss/gauss_iir.hpp"

namespace starsift::cuda {

namespace {

constexpr std::size_t kAlign = 256;

std::size_t aligned(std::size_t bytes) {
  return (bytes + kAlign - 1) / kAlign * kAlign;
}

}  // namespace

std::string_view to_string(GaussPath path) noexcept {
  switch (path) {
    case GaussPath::Auto:
      return "auto";
    case GaussPath::Fused:
      return "fused";
    case GaussPath::Separable:
      return "separable";
    case GaussPath::Decimated:
      return "decimated";
    case GaussPath::Recursive:
      return "recursive";
  }
  return "?";
}

GaussPath gauss_auto_path(const GaussParams& params) noexcept {
  const GaussPath exact = gauss_exact_path(params);
  if (exact == GaussPath::Fused) return exact;
  return gauss_detail::decimated_params(params) ? GaussPath::Decimated : exact;
}

GaussPath gauss_auto_path(const GaussParams& params, ConstImageView in, ImageView out) noexcept {
  // GRAY8 frames on the tensor cores: exact sums, and faster than the decimation by 2 up to
  // their largest radius (bench/results/gauss/h200-mma/), not than the decimation by 3.
  const bool by_3 = gauss_detail::decimated_params(params) &&
                    std::min(params.sigma_x, params.sigma_y) >= kDecimatedBy3Sigma;
  return !by_3 && gauss_detail::mma_takes(params, in, out) ? GaussPath::Fused
                                                           : gauss_auto_path(params);
}

GaussPath gauss_exact_path(const GaussParams& params) noexcept {
  if (params.effective_radius_x() <= kMaxFusedRadius &&
      params.effective_radius_y() <= kMaxFusedRadius) {
    return GaussPath::Fused;
  }
  // Beyond the fused radii the recursion is the faster path on a GPU at every sigma
  // (measured on an H200, 4096^2 GRAY8: 35 Gpix/s against the separable sums' 13 at sigma 5),
  // but it approximates the Gaussian well only from GaussIir::kMinSigma: an axis blurred
  // less than that (and not 0) keeps both axes on the exact sums.
  const auto too_small = [](double sigma) { return sigma > 0.0 && sigma < GaussIir::kMinSigma; };
  if (too_small(params.sigma_x) || too_small(params.sigma_y)) return GaussPath::Separable;
  return GaussPath::Recursive;
}

namespace gauss_detail {

bool decimated_params(const GaussParams& params) noexcept {
  // Automatic radii only: a radius of the user's is a truncation the decimation cannot keep.
  return params.sigma_x >= kDecimatedMinSigma && params.sigma_y >= kDecimatedMinSigma &&
         params.radius_x == 0 && params.radius_y == 0;
}

ScratchLayout scratch_layout(void* base, int width, int height, PixelFormat format) noexcept {
  ScratchLayout s;
  const int channels = format_info(format).color_channels;
  // Rows of whole 128-byte lines, so every row of the float frames starts aligned.
  s.row_floats = (static_cast<std::size_t>(width) * channels + 31) / 32 * 32;
  s.frame_bytes = aligned(s.row_floats * sizeof(float) * static_cast<std::size_t>(height));
  s.weights_bytes = aligned((GaussParams::kMaxRadius + 1) * sizeof(float));
  if (!base) return s;
  auto* bytes = static_cast<std::byte*>(base);
  s.weights_x = reinterpret_cast<float*>(bytes);
  s.weights_y = reinterpret_cast<float*>(bytes + s.weights_bytes);
  s.frame_a = reinterpret_cast<float*>(bytes + 2 * s.weights_bytes);
  s.frame_b = reinterpret_cast<float*>(bytes + 2 * s.weights_bytes + s.frame_bytes);
  return s;
}

cudaError_t launch_fused_path(const GaussParams& params, ConstImageView in, ImageView out,
                              cudaStream_t stream) {
  if (mma_takes(params, in, out)) return launch_mma(params, in, out, stream);
  return tile_takes(params, in, out) ? launch_tile(params, in, out, stream)
                                     : launch_fused(params, in, out, stream);
}

}  // namespace gauss_detail

std::size_t gauss_scratch_bytes(GaussPath path, int width, int height,
                                PixelFormat format) noexcept {
  const gauss_detail::ScratchLayout s =
      gauss_detail::scratch_layout(nullptr, width, height, format);
  switch (path) {
    case GaussPath::Fused:
      return 0;
    case GaussPath::Separable:
      return 2 * s.weights_bytes + s.frame_bytes;
    case GaussPath::Auto:
    case GaussPath::Decimated:
    case GaussPath::Recursive:
      break;
  }
  return 2 * s.weights_bytes + 2 * s.frame_bytes;
}

cudaError_t launch_gauss(const GaussParams& params, ConstImageView in, ImageView out, void* scratch,
                         std::size_t scratch_bytes, cudaStream_t stream, GaussPath path) {
  if (in.width != out.width || in.height != out.height || in.format != out.format || in.width < 1 ||
      in.height < 1 || !gauss_supports(in.format)) {
    return cudaErrorInvalidValue;
  }
  const bool automatic = path == GaussPath::Auto;
  if (automatic) path = gauss_auto_path(params, in, out);
  if (path == GaussPath::Fused) {
    return gauss_detail::launch_fused_path(params, in, out, stream);
  }
  if (!scratch || scratch_bytes < gauss_scratch_bytes(path, in.width, in.height, in.format)) {
    return cudaErrorInvalidValue;
  }
  const gauss_detail::ScratchLayout layout =
      gauss_detail::scratch_layout(scratch, in.width, in.height, in.format);
  if (path == GaussPath::Decimated && automatic &&
      !gauss_detail::decimated_takes(params, in.width, in.height, in.format, layout)) {
    // A frame too small for the margins.
    if (gauss_detail::mma_takes(params, in, out)) {
      return gauss_detail::launch_fused_path(params, in, out, stream);
    }
    path = gauss_exact_path(params);
  }
  if (path == GaussPath::Separable) {
    return gauss_detail::launch_separable(params, in, out, layout, stream);
  }
  if (path == GaussPath::Decimated) {
    return gauss_detail::launch_decimated(params, in, out, layout, stream);
  }
  return gauss_detail::launch_recursive(params, in, out, layout, stream);
}

}  // namespace starsift::cuda
