#include "definitions/sequence_layout.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

#include "common/error.h"

namespace ptxbench {
namespace {

// SplitMix64: a fixed, portable stream (std::uniform_int_distribution differs between libraries).
class Stream {
 public:
  explicit Stream(std::string_view key) {
    uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
    for (unsigned char c : key) h = (h ^ c) * 0x100000001b3ull;
    m_state = h;
  }
  uint64_t next() {
    uint64_t z = (m_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, n) (n ≥ 1); the modulo bias is below 2⁻³² for the sizes used here.
  int64_t below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }

 private:
  uint64_t m_state;
};

// The first `count` entries of a partial Fisher–Yates shuffle of lo … hi − 1: distinct values.
std::vector<int64_t> distinct_sample(Stream& s, int64_t lo, int64_t hi, int64_t count) {
  std::vector<int64_t> pool(static_cast<std::size_t>(hi - lo));
  std::iota(pool.begin(), pool.end(), lo);
  for (int64_t i = 0; i < count; ++i)
    std::swap(pool[static_cast<std::size_t>(i)], pool[static_cast<std::size_t>(i + s.below(hi - lo - i))]);
  pool.resize(static_cast<std::size_t>(count));
  return pool;
}

// Running sums of `lengths` from 0: the indptr array.
std::vector<int32_t> indptr_of(const std::vector<int64_t>& lengths) {
  std::vector<int32_t> out{0};
  for (int64_t n : lengths) out.push_back(static_cast<int32_t>(out.back() + n));
  return out;
}

// Lengths between sorted cut points in [0, total], with 0 and total as the ends.
std::vector<int64_t> parts(std::vector<int64_t> cuts, int64_t total) {
  std::sort(cuts.begin(), cuts.end());
  cuts.insert(cuts.begin(), 0);
  cuts.push_back(total);
  std::vector<int64_t> out;
  for (std::size_t i = 1; i < cuts.size(); ++i) out.push_back(cuts[i] - cuts[i - 1]);
  return out;
}

void check_totals(const SequenceTotals& t) {
  const std::string what = "sequence layout (batch " + std::to_string(t.batch) + ", total_q " + std::to_string(t.total_q) +
                           ", total_kv " + std::to_string(t.total_kv) + ", num_pages " + std::to_string(t.num_pages) + "): ";
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  if (t.batch < 1) throw InputError("definitions", what + "needs at least one sequence");
  if (t.total_q < t.batch) throw InputError("definitions", what + "every sequence needs a query (total_q ≥ batch)");
  if (t.total_kv < t.total_q)
    throw InputError("definitions", what + "every sequence needs as many keys as queries (total_kv ≥ total_q)");
  if (t.num_pages < 0 || (t.num_pages > 0 && t.num_pages < t.total_kv))
    throw InputError("definitions", what + "distinct pages need num_pages ≥ total_kv");
  if (t.total_kv > kMax || t.num_pages > kMax) throw InputError("definitions", what + "int32 indices overflow");
}

}  // namespace

SequenceLayout make_sequence_layout(std::string_view key, const SequenceTotals& t) {
  check_totals(t);
  Stream s(key);
  const std::vector<int64_t> q_len = parts(distinct_sample(s, 1, t.total_q, t.batch - 1), t.total_q);
  const int64_t extra = t.total_kv - t.total_q;
  std::vector<int64_t> cuts;
  for (int64_t b = 1; b < t.batch; ++b) cuts.push_back(s.below(extra + 1));
  std::vector<int64_t> kv_len = parts(cuts, extra);
  for (std::size_t b = 0; b < kv_len.size(); ++b) kv_len[b] += q_len[b];
  SequenceLayout out;
  out.qo_indptr = indptr_of(q_len);
  out.kv_indptr = indptr_of(kv_len);
  if (t.num_pages > 0)
    for (int64_t page : distinct_sample(s, 0, t.num_pages, t.total_kv)) out.kv_indices.push_back(static_cast<int32_t>(page));
  return out;
}

}  // namespace ptxbench
