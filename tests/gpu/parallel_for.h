// One pool of worker threads for the GPU programs' host-side fan-out (check.cpp and bench.cpp compile the fast
// kernels of their cases or shapes ahead of running them, through go_ext_fast_prepare, which is thread-safe).
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

/// What a parallel_for run gives back: the errors (in completion order), the pool's size and the wall time.
struct ParallelRun {
  std::vector<std::string> errors;
  size_t threads;
  double ms;
};

/// Runs fn(i) for every i in [0, n) on min(n, hardware threads) threads, each taking the next index; fn returns an
/// error message or "" for success.
template <class F>
ParallelRun parallel_for(size_t n, F fn) {
  const auto t0 = std::chrono::steady_clock::now();
  ParallelRun run{{}, std::min<size_t>(n, std::max(1u, std::thread::hardware_concurrency())), 0};
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::vector<std::thread> pool;
  for (size_t t = 0; t < run.threads; ++t) {
    pool.emplace_back([&] {
      for (size_t i; (i = next.fetch_add(1)) < n;) {
        std::string e = fn(i);
        if (e.empty()) continue;
        std::lock_guard<std::mutex> lk(mu);
        run.errors.push_back(std::move(e));
      }
    });
  }
  for (auto& th : pool) th.join();
  run.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return run;
}
