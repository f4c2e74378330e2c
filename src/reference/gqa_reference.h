// Trusted reference of grouped-query attention over variable-length sequences (the held-out GQA
// definitions: paged decode, paged causal prefill, ragged causal prefill). bf16 inputs, fp32
// arithmetic, fp32 outputs (the caller compares them with a bf16 output as for MHA). Chosen for
// obviousness over speed: one thread block per (query token, query head) row, which scores every
// key it sees twice (once for the row maximum, once for the exponentials and P·V), so it needs no
// scratch whatever the sequence lengths. The full reference and the spot-check rows are the same
// kernel.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace ptxbench {

struct GqaDims {
  int64_t num_qo_heads = 0, num_kv_heads = 0, head_dim = 0;  ///< head_dim ≤ 256
  int64_t batch = 0;    ///< sequences
  int64_t total_q = 0;  ///< query tokens (rows of q)
  float sm_scale = 0.f;
  bool causal = false;  ///< bottom-right aligned: query i of a sequence sees keys j ≤ i + kv_len − q_len
};

/// The sequence layout in device memory (int32, as the definitions pass it).
struct GqaIndexView {
  const int32_t* qo_indptr = nullptr;   ///< batch + 1 entries; nullptr: one query per sequence (decode)
  const int32_t* kv_indptr = nullptr;   ///< batch + 1 entries
  const int32_t* kv_indices = nullptr;  ///< page ids (page size 1) of the keys; nullptr: ragged, key j of
                                        ///< sequence b is row kv_indptr[b] + j of k and v
};

/// q [total_q, Hq, D]; k, v [rows, Hkv, D] (paged: rows = pages). Query head h reads kv head
/// h / (Hq / Hkv). out [total_q, Hq, D] = softmax(sm_scale·q·kᵀ)·v over the keys the query sees, lse
/// [total_q, Hq] = log2 Σ exp(sm_scale·q·k) (base 2); a query that sees no key gets 0 and −inf.
void gqa_reference(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, const GqaIndexView& index,
                   const GqaDims& dims, float* out, float* lse, cudaStream_t stream);

/// The same for the rows `rows` (device, token·Hq + head) only: out_rows receives n_rows × D floats,
/// lse_rows n_rows floats, row after row; either may be nullptr (not written).
void gqa_reference_rows(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
                        const GqaIndexView& index, const GqaDims& dims, const int64_t* rows, int64_t n_rows,
                        float* out_rows, float* lse_rows, cudaStream_t stream);

}  // namespace ptxbench
