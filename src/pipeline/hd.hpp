// SPDX-License-Identifier: LGPL-2.1-or-later
// Marks functions that both the CPU reference and CUDA kernels call, so a definition
// (a border rule, a float ordering) exists exactly once.
#pragma once

#if defined(__CUDACC__)
#define STARSIFT_HD __host__ __device__ __forceinline__
#else
#define STARSIFT_HD inline
#endif
