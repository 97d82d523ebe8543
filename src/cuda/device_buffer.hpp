// SPDX-License-Identifier: LGPL-2.1-or-later
// RAII owners of device memory and streams. Allocation happens when a stage is configured,
// never per frame.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <utility>

#include "cuda/cuda_check.hpp"
#include "pipeline/error.hpp"

namespace starsift::cuda {

// A pitched 2D allocation: `height` rows of at least `row_bytes` bytes, rows `pitch` apart
// (aligned for coalesced and vector access).
class DeviceImage {
 public:
  DeviceImage() = default;
  DeviceImage(std::size_t row_bytes, int height) { allocate(row_bytes, height); }
  ~DeviceImage() { release(); }
  DeviceImage(DeviceImage&& o) noexcept { *this = std::move(o); }
  DeviceImage& operator=(DeviceImage&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(pitch_, o.pitch_);
    std::swap(row_bytes_, o.row_bytes_);
    std::swap(height_, o.height_);
    return *this;
  }
  DeviceImage(const DeviceImage&) = delete;
  DeviceImage& operator=(const DeviceImage&) = delete;

  // Throws Error naming the size and shape when the device has no room ("out of memory"
  // alone does not say for what).
  void allocate(std::size_t row_bytes, int height) {
    release();
    const cudaError_t status =
        cudaMallocPitch(&ptr_, &pitch_, row_bytes, static_cast<std::size_t>(height));
    if (status == cudaErrorMemoryAllocation) {
      cudaGetLastError();  // clear it: the device stays usable for smaller requests
      ptr_ = nullptr;
      pitch_ = 0;
      throw Error("cannot allocate a device image of " + std::to_string(height) + " rows of " +
                  std::to_string(row_bytes) + " bytes (" +
                  std::to_string(row_bytes * static_cast<std::size_t>(height)) +
                  " bytes before row padding): the GPU is out of memory");
    }
    check(status, "cudaMallocPitch");
    row_bytes_ = row_bytes;
    height_ = height;
  }
  void release() noexcept {
    if (ptr_) cudaFree(ptr_);
    ptr_ = nullptr;
    pitch_ = row_bytes_ = 0;
    height_ = 0;
  }

  std::byte* data() const noexcept { return static_cast<std::byte*>(ptr_); }
  std::size_t pitch() const noexcept { return pitch_; }
  std::size_t row_bytes() const noexcept { return row_bytes_; }
  int height() const noexcept { return height_; }

 private:
  void* ptr_ = nullptr;
  std::size_t pitch_ = 0;
  std::size_t row_bytes_ = 0;
  int height_ = 0;
};

class Stream {
 public:
  Stream() {
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  ~Stream() {
    if (stream_) cudaStreamDestroy(stream_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const noexcept { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// A timing event (created once, recorded per frame).
class Event {
 public:
  Event() { check(cudaEventCreate(&event_), "cudaEventCreate"); }
  ~Event() {
    if (event_) cudaEventDestroy(event_);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const noexcept { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// An event that only orders work and reports completion (no timing: cheaper to record).
class SyncEvent {
 public:
  SyncEvent() {
    check(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), "cudaEventCreate");
  }
  ~SyncEvent() {
    if (event_) cudaEventDestroy(event_);
  }
  SyncEvent(const SyncEvent&) = delete;
  SyncEvent& operator=(const SyncEvent&) = delete;
  cudaEvent_t get() const noexcept { return event_; }
  // Whether the work before its last record has finished (never waits).
  bool done() const noexcept { return cudaEventQuery(event_) == cudaSuccess; }

 private:
  cudaEvent_t event_ = nullptr;
};

// An instantiated CUDA graph: launched as one unit, far cheaper than its kernels one by one.
class GraphExec {
 public:
  GraphExec() = default;
  ~GraphExec() { reset(); }
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;
  cudaGraphExec_t get() const noexcept { return exec_; }
  explicit operator bool() const noexcept { return exec_ != nullptr; }
  void reset(cudaGraphExec_t exec = nullptr) noexcept {
    if (exec_) cudaGraphExecDestroy(exec_);
    exec_ = exec;
  }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

// Makes `device_id` current for the calling thread (elements stream from several threads).
inline void use_device(int device_id) {
  check(cudaSetDevice(device_id), "cudaSetDevice");
}

}  // namespace starsift::cuda
