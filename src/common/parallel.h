// A loop over n elements split into contiguous slices, each run on its own host thread: the
// output comparison and the host-side input fill, both over tensors of up to ~10^8 elements.
#pragma once

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace ptxbench {

/// How many slices to cut n elements into: one below 2^20 elements (a thread costs more than it
/// saves there), else `threads`, where 0 means one per core, at most 16.
inline unsigned slice_count(int64_t n, unsigned threads = 0) {
  if (n < (1 << 20)) return 1;
  return threads > 0 ? threads : std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
}

/// Calls work(slice, begin, end) for `slices` contiguous slices of [0, n), in index order; slice 0
/// runs on the calling thread. Returns when all have finished.
template <class Work>
void for_each_slice(int64_t n, unsigned slices, Work work) {
  slices = std::max(1u, slices);
  auto run = [&](unsigned s) { work(s, n * s / slices, n * (s + 1) / slices); };
  std::vector<std::thread> pool;
  for (unsigned s = 1; s < slices; ++s) pool.emplace_back(run, s);
  run(0);
  for (auto& t : pool) t.join();
}

}  // namespace ptxbench
