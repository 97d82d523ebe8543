// SPDX-License-Identifier: LGPL-2.1-or-later
#include "bench/timing.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace starsift::bench {

namespace {

class Event {
 public:
  Event() { status_ = cudaEventCreate(&event_); }
  ~Event() {
    if (event_) cudaEventDestroy(event_);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  Event(Event&& o) noexcept : event_(o.event_), status_(o.status_) { o.event_ = nullptr; }
  cudaEvent_t get() const noexcept { return event_; }
  cudaError_t status() const noexcept { return status_; }

 private:
  cudaEvent_t event_ = nullptr;
  cudaError_t status_ = cudaSuccess;
};

class Graph {
 public:
  ~Graph() {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
  }
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
};

// Milliseconds between two recorded events, after the stream reached the second one.
cudaError_t elapsed(const Event& start, const Event& stop, double& ms) {
  float f = 0.0f;
  if (const cudaError_t s = cudaEventSynchronize(stop.get()); s != cudaSuccess) return s;
  const cudaError_t s = cudaEventElapsedTime(&f, start.get(), stop.get());
  ms = f;
  return s;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Captures `calls` calls (frames 0, 1, ... round robin) into an executable graph.
std::string capture(cudaStream_t stream, int frames, int calls, const Launch& launch,
                    cudaStreamCaptureMode mode, Graph& g) {
  if (const cudaError_t s = cudaStreamBeginCapture(stream, mode); s != cudaSuccess) {
    return cuda_error("cudaStreamBeginCapture", s);
  }
  std::string error;
  for (int k = 0; k < calls && error.empty(); ++k) {
    if (const char* e = launch(k % frames)) error = e;
  }
  const cudaError_t end = cudaStreamEndCapture(stream, &g.graph);
  if (error.empty() && end != cudaSuccess) error = cuda_error("cudaStreamEndCapture", end);
  if (error.empty()) {
    if (const cudaError_t s = cudaGraphInstantiate(&g.exec, g.graph, 0); s != cudaSuccess) {
      error = cuda_error("cudaGraphInstantiate", s);
    }
  }
  if (!error.empty()) cudaGetLastError();  // a failed capture leaves a non-sticky error behind
  return error;
}

}  // namespace

std::string cuda_error(std::string_view what, cudaError_t status) {
  return std::string(what) + ": " + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) +
         ")";
}

Timing measure(cudaStream_t stream, int frames, const TimingPlan& plan, const Launch& launch,
               cudaStreamCaptureMode capture_mode) {
  Timing t;
  const auto fail = [&](std::string what) {
    t.error = std::move(what);
    return t;
  };
  const auto fail_cuda = [&](const char* what, cudaError_t s) { return fail(cuda_error(what, s)); };
  Event start;
  Event stop;
  if (start.status() != cudaSuccess) return fail_cuda("cudaEventCreate", start.status());
  if (stop.status() != cudaSuccess) return fail_cuda("cudaEventCreate", stop.status());

  // 1. Cold call, then the estimate.
  if (const char* e = launch(0)) return fail(e);
  if (const cudaError_t s = cudaStreamSynchronize(stream); s != cudaSuccess) {
    return fail_cuda("first call", s);
  }
  double estimate = 0.0;
  cudaEventRecord(start.get(), stream);
  if (const char* e = launch(1 % frames)) return fail(e);
  cudaEventRecord(stop.get(), stream);
  if (const cudaError_t s = elapsed(start, stop, estimate); s != cudaSuccess) {
    return fail_cuda("timed call", s);
  }
  if (estimate * frames <= 2.0 * plan.target_ms) {
    cudaEventRecord(start.get(), stream);
    for (int f = 0; f < frames; ++f) {
      if (const char* e = launch(f)) return fail(e);
    }
    cudaEventRecord(stop.get(), stream);
    double pass = 0.0;
    if (const cudaError_t s = elapsed(start, stop, pass); s != cudaSuccess) {
      return fail_cuda("warm-up pass", s);
    }
    estimate = pass / frames;
  }
  estimate = std::max(estimate, 1e-4);

  // 2. Calls per repetition, and how they are issued.
  int reps = std::max(plan.reps, 1);
  int calls = static_cast<int>(std::clamp(std::lround(plan.target_ms / estimate), 1L, 1L << 20));
  if (estimate >= plan.slow_call_ms) {
    reps = 1;
    calls = 1;
  }
  Graph graph;
  int launches = 1;  // graph launches per repetition
  if (calls >= frames) {
    const int passes = (calls + frames - 1) / frames;
    const int graph_passes = std::min(passes, std::max(plan.max_graph_calls / frames, 1));
    calls = passes * frames;
    t.capture_error = capture(stream, frames, graph_passes * frames, launch, capture_mode, graph);
    t.graph = t.capture_error.empty();
    if (t.graph) {
      launches = (passes + graph_passes - 1) / graph_passes;
      calls = launches * graph_passes * frames;
      // Uploads the graph and runs it once more as warm-up.
      if (const cudaError_t s = cudaGraphLaunch(graph.exec, stream); s != cudaSuccess) {
        return fail_cuda("cudaGraphLaunch", s);
      }
    }
  }
  t.calls = calls;

  // 3. The repetitions, each between its own pair of events.
  std::vector<Event> starts(reps);
  std::vector<Event> stops(reps);
  int next = 0;
  for (int r = 0; r < reps; ++r) {
    cudaEventRecord(starts[r].get(), stream);
    if (t.graph) {
      for (int g = 0; g < launches; ++g) {
        if (const cudaError_t s = cudaGraphLaunch(graph.exec, stream); s != cudaSuccess) {
          return fail_cuda("cudaGraphLaunch", s);
        }
      }
    } else {
      for (int k = 0; k < calls; ++k) {
        if (const char* e = launch(next)) return fail(e);
        next = (next + 1) % frames;
      }
    }
    cudaEventRecord(stops[r].get(), stream);
  }
  for (int r = 0; r < reps; ++r) {
    double ms = 0.0;
    if (const cudaError_t s = elapsed(starts[r], stops[r], ms); s != cudaSuccess) {
      return fail_cuda("timed repetition", s);
    }
    t.ms_reps.push_back(ms / calls);
  }
  t.ms_median = median_of(t.ms_reps);
  t.ms_min = *std::min_element(t.ms_reps.begin(), t.ms_reps.end());
  return t;
}

}  // namespace starsift::bench
