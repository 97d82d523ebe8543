// SPDX-License-Identifier: LGPL-2.1-or-later
#include "bench/transfer_bound.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "cuda/cuda_check.hpp"

namespace starsift::bench {

using cuda::check;
using Clock = std::chrono::steady_clock;

TransferBound measure_transfers(std::size_t bytes) {
  void *h_in, *h_out, *d_in, *d_out;
  check(cudaHostAlloc(&h_in, bytes, cudaHostAllocDefault), "cudaHostAlloc");
  check(cudaHostAlloc(&h_out, bytes, cudaHostAllocDefault), "cudaHostAlloc");
  check(cudaMalloc(&d_in, bytes), "cudaMalloc");
  check(cudaMalloc(&d_out, bytes), "cudaMalloc");
  std::memset(h_in, 1, bytes);
  cudaStream_t up, down;
  check(cudaStreamCreateWithFlags(&up, cudaStreamNonBlocking), "stream");
  check(cudaStreamCreateWithFlags(&down, cudaStreamNonBlocking), "stream");
  constexpr int kReps = 30;
  auto run = [&](bool do_up, bool do_down) {
    for (int w = 0; w < 3; ++w) {  // warm-up
      if (do_up) cudaMemcpyAsync(d_in, h_in, bytes, cudaMemcpyHostToDevice, up);
      if (do_down) cudaMemcpyAsync(h_out, d_out, bytes, cudaMemcpyDeviceToHost, down);
    }
    check(cudaDeviceSynchronize(), "sync");  // measurement setup, not a per-frame path
    const auto t0 = Clock::now();
    for (int r = 0; r < kReps; ++r) {
      if (do_up) cudaMemcpyAsync(d_in, h_in, bytes, cudaMemcpyHostToDevice, up);
      if (do_down) cudaMemcpyAsync(h_out, d_out, bytes, cudaMemcpyDeviceToHost, down);
    }
    check(cudaDeviceSynchronize(), "sync");
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    return (do_up + do_down) * double(bytes) * kReps / s / 1e9;
  };
  TransferBound b{run(true, false), run(false, true), run(true, true)};
  cudaStreamDestroy(up);
  cudaStreamDestroy(down);
  cudaFreeHost(h_in);
  cudaFreeHost(h_out);
  cudaFree(d_in);
  cudaFree(d_out);
  return b;
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * (v.size() - 1))];
}

}  // namespace starsift::bench
