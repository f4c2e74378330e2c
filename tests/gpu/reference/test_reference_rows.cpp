// The spot-check references (src/reference/reference_rows.*, through each operator's
// reference_rows): the sampled rows equal the same rows of the full trusted reference, for the
// GEMM and the four attention op types, including the first and last rows (causal edges) and
// repeated rows; and each operator's fresh inputs are what the integrity design says.
#include <algorithm>
#include <random>
#include <vector>

#include "definitions/catalog.h"
#include "gpu/cuda_call.h"
#include "gpu/device_buffer.h"
#include "gpu_test_support.h"
#include "ops/operator.h"

using namespace ptxbench;
using ptxbench::testing::GpuTest;

namespace {

class ReferenceRows : public GpuTest {};

// Full reference and row references of every output on the same inputs; max |diff| / (|ref| + 1).
double worst_row_difference(const std::string& definition, const std::string& workload) {
  Catalog catalog = Catalog::load(PTXBENCH_SOURCE_DIR);
  const Definition& def = catalog.definition(definition);
  ResolvedWorkload w = resolve_workload(def, catalog.find_workload(definition, workload));
  auto op = make_operator(def.op_type);
  std::vector<DeviceBuffer> in_bufs;
  std::vector<DeviceTensor> inputs;
  std::vector<TensorSpec> outs;
  for (const auto& t : w.tensors) {
    if (t.is_output) {
      outs.push_back(t);
      continue;
    }
    in_bufs.emplace_back(t.bytes());
    inputs.push_back({in_bufs.back().get(), t});
  }
  op->make_inputs(w, inputs, 7, nullptr);
  std::vector<DeviceBuffer> full;
  std::vector<float*> full_ptrs;
  for (const auto& t : outs) {
    full.emplace_back(static_cast<std::size_t>(t.numel()) * 4);
    full_ptrs.push_back(full.back().as<float>());
  }
  op->reference(w, inputs, full_ptrs, nullptr);

  std::mt19937_64 rng(11);
  std::vector<RowSample> samples;
  std::vector<DeviceBuffer> row_bufs;
  std::vector<float*> row_ptrs;
  const int64_t n = 9;
  for (std::size_t o = 0; o < outs.size(); ++o) {
    const int64_t len = op->row_length(w, o), count = outs[o].numel() / len;
    RowSample s{o, {0, count - 1, count - 1}};  // the edges, and a row twice
    while (static_cast<int64_t>(s.rows.size()) < n) s.rows.push_back(static_cast<int64_t>(rng() % count));
    samples.push_back(s);
    row_bufs.emplace_back(static_cast<std::size_t>(n * len) * 4);
    row_ptrs.push_back(row_bufs.back().as<float>());
  }
  DeviceBuffer scratch(op->row_scratch_bytes(w, n));
  op->reference_rows(w, inputs, samples, row_ptrs, scratch.get(), nullptr);
  PTXB_CUDA_CALL(cudaDeviceSynchronize());

  double worst = 0.0;
  for (std::size_t o = 0; o < outs.size(); ++o) {
    const int64_t len = op->row_length(w, o);
    std::vector<float> all(static_cast<std::size_t>(outs[o].numel())), rows(static_cast<std::size_t>(n * len));
    PTXB_CUDA_CALL(cudaMemcpy(all.data(), full_ptrs[o], all.size() * 4, cudaMemcpyDeviceToHost));
    PTXB_CUDA_CALL(cudaMemcpy(rows.data(), row_ptrs[o], rows.size() * 4, cudaMemcpyDeviceToHost));
    for (int64_t r = 0; r < n; ++r)
      for (int64_t e = 0; e < len; ++e) {
        double ref = all[static_cast<std::size_t>(samples[o].rows[r] * len + e)];
        double got = rows[static_cast<std::size_t>(r * len + e)];
        worst = std::max(worst, std::abs(got - ref) / (std::abs(ref) + 1.0));
      }
  }
  return worst;
}

}  // namespace

TEST_F(ReferenceRows, GemmRowsEqualTheFullReference) {
  EXPECT_LT(worst_row_difference("gemm_n7168_k5120", "M=70"), 1e-4);
}

TEST_F(ReferenceRows, AttentionForwardRowsEqualTheFullReference) {
  EXPECT_LT(worst_row_difference("mha_with_lse_d128", "S=512"), 1e-4);
  EXPECT_LT(worst_row_difference("mha_with_lse_d128_causal", "S=512"), 1e-4);
}

TEST_F(ReferenceRows, AttentionBackwardRowsEqualTheFullReference) {
  EXPECT_LT(worst_row_difference("mha_bwd_d128", "S=512"), 1e-4);
  EXPECT_LT(worst_row_difference("mha_bwd_d128_causal", "S=512"), 1e-4);
}

TEST(FreshInputs, EveryTimedCallRefreshesWhatTheDesignSays) {
  Catalog catalog = Catalog::load(PTXBENCH_SOURCE_DIR);
  auto fresh = [&](const std::string& name) {
    const Definition& def = catalog.definition(name);
    return make_operator(def.op_type)->fresh_inputs(resolve_workload(def, catalog.default_workload(name)));
  };
  EXPECT_EQ(fresh("gemm_n7168_k5120"), (std::vector<std::size_t>{0, 1}));          // A, B
  EXPECT_EQ(fresh("mha_with_lse_d128"), (std::vector<std::size_t>{0, 1, 2}));      // Q, K, V
  EXPECT_EQ(fresh("mha_bwd_d128_causal"), (std::vector<std::size_t>{4}));          // dO
}
