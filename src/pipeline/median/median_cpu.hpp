// SPDX-License-Identifier: LGPL-2.1-or-later
// The CPU backend's fast median: vectorised selection networks over whole rows, for the
// sizes and formats where a camera host spends its time. Bit-identical to
// median_reference() (and so to the CUDA kernels); every other case is the reference.
#pragma once

#include <string_view>

#include "pipeline/image.hpp"
#include "pipeline/median/params.hpp"
#include "pipeline/thread_pool.hpp"

namespace starsift {

// Whether median_cpu() takes its vectorised path for these parameters and format: sizes 3,
// 5 and 7 on GRAY8, GRAY16 and the 4 x 8-bit formats (RGBA, BGRA, RGBx, BGRx), any border.
bool median_cpu_vectorised(const MedianParams& params, PixelFormat format) noexcept;

// Which code the vectorised path runs. Best: the widest vectors this CPU has (AVX2 on an
// x86-64 that has it, else the target's baseline: SSE2, NEON); Baseline: the baseline
// always (tests compare both with the reference).
enum class MedianCpuIsa { Best, Baseline };

// The instruction set `isa` resolves to on this CPU ("avx2", "baseline").
std::string_view median_cpu_isa_name(MedianCpuIsa isa) noexcept;

// Filters `in` into `out` as median_reference() does (same size and format, distinct
// memory, any strides; alpha/padding bytes copied), on `pool`'s threads, by row bands.
// Cases median_cpu_vectorised() does not cover run median_reference().
void median_cpu(const MedianParams& params, ConstImageView in, ImageView out, ThreadPool& pool,
                MedianCpuIsa isa = MedianCpuIsa::Best);

}  // namespace starsift
