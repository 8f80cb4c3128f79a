// for_each_at_a_time: calls fn(item) for every item, `workers` items at a time, each on its own
// thread. The first exception thrown stops further items from starting; it is rethrown once the
// items already started have finished.
#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace normlab::particles {

template <typename T, typename F>
void for_each_at_a_time(const std::vector<T>& items, int workers, F&& fn) {
  if (workers <= 1) {
    for (const T& item : items) fn(item);
    return;
  }
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr first_error;
  std::mutex error_mutex;
  auto work = [&] {
    for (size_t k = next++; k < items.size() && !failed; k = next++) {
      try {
        fn(items[k]);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(error_mutex);
        if (!first_error) first_error = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) threads.emplace_back(work);
  for (std::thread& t : threads) t.join();
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace normlab::particles
