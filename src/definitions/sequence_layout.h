// The sequence layout of a batched variable-length workload (the held-out GQA definitions): how many
// query and key tokens each sequence has and, for a paged KV cache, which pages hold its keys. A
// workload fixes only the totals (axes such as total_q, num_kv_indices, num_pages), so the layout
// is drawn from them by a fixed generator keyed by the workload's uuid: the same for every trial,
// every candidate and every process, and never from the trial seed.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace ptxbench {

/// The totals a layout must meet.
struct SequenceTotals {
  int64_t batch = 0;      ///< sequences (≥ 1)
  int64_t total_q = 0;    ///< query tokens, ≥ batch (each sequence has ≥ 1 query)
  int64_t total_kv = 0;   ///< key tokens, ≥ total_q (each sequence has ≥ as many keys as queries)
  int64_t num_pages = 0;  ///< 0: ragged (keys are contiguous rows); else page ids drawn from [0, num_pages)
};

/// indptr arrays of batch + 1 entries (0 first, the total last) and the page ids of a paged cache.
struct SequenceLayout {
  std::vector<int32_t> qo_indptr;
  std::vector<int32_t> kv_indptr;
  std::vector<int32_t> kv_indices;  ///< paged: total_kv distinct page ids in a shuffled order; ragged: empty
  [[nodiscard]] int64_t batch() const { return static_cast<int64_t>(kv_indptr.size()) - 1; }
  [[nodiscard]] int64_t q_len(int64_t b) const { return qo_indptr[b + 1] - qo_indptr[b]; }
  [[nodiscard]] int64_t kv_len(int64_t b) const { return kv_indptr[b + 1] - kv_indptr[b]; }
};

/// The layout for `totals`, drawn by a SplitMix64 stream seeded with the FNV-1a hash of `key` (the
/// workload uuid), with integer arithmetic only, so every platform draws the same one:
///   - query lengths: a uniformly random composition of total_q into batch parts ≥ 1 (batch − 1
///     distinct cut points in [1, total_q), by a partial Fisher–Yates shuffle, sorted);
///   - key lengths: each sequence's query length plus its share of total_kv − total_q, split at
///     batch − 1 cut points drawn (with repetition) from [0, total_kv − total_q], so q_len ≤ kv_len
///     and every query sees at least one key under the bottom-right causal mask;
///   - pages: the first total_kv entries of a partial Fisher–Yates shuffle of 0 … num_pages − 1,
///     so they are distinct, in range and scattered through the cache.
/// InputError when the totals are impossible (batch < 1, total_q < batch, total_kv < total_q,
/// num_pages < total_kv when paged) or exceed int32.
SequenceLayout make_sequence_layout(std::string_view key, const SequenceTotals& totals);

}  // namespace ptxbench
