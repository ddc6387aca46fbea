// One pool of worker threads for the GPU programs' host-side fan-out (check.cpp and bench.cpp compile the fast
// kernels of their cases or shapes ahead of running them, through go_ext_fast_prepare, which is thread-safe).
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

/// Runs fn(i) for every i in [0, n) on min(n, hardware threads) threads, each taking the next index; fn returns an
/// error message or "" for success. Returns the errors (in completion order) and sets *threads to the pool's size.
template <class F>
std::vector<std::string> parallel_for(size_t n, F fn, size_t* threads) {
  const size_t nthreads = std::min<size_t>(n, std::max(1u, std::thread::hardware_concurrency()));
  *threads = nthreads;
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::vector<std::string> errors;
  std::vector<std::thread> pool;
  for (size_t t = 0; t < nthreads; ++t) {
    pool.emplace_back([&] {
      for (size_t i; (i = next.fetch_add(1)) < n;) {
        std::string e = fn(i);
        if (e.empty()) continue;
        std::lock_guard<std::mutex> lk(mu);
        errors.push_back(std::move(e));
      }
    });
  }
  for (auto& th : pool) th.join();
  return errors;
}
