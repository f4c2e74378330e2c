#include "ops/gemm_op.h"

#include "baseline/gemm_cublaslt.h"
#include "common/error.h"
#include "gpu/cuda_call.h"
#include "reference/gemm_reference.h"
#include "reference/reference_rows.h"

namespace ptxbench {
namespace {
struct Dims {
  int64_t M, N, K;
};
Dims dims(const ResolvedWorkload& w) {
  const auto& A = w.tensors.at(0).shape;
  const auto& B = w.tensors.at(1).shape;
  PTXB_ENSURE(A.size() == 2 && B.size() == 2 && A[1] == B[1], "ops", "gemm expects A[M,K], B[N,K]");
  return {A[0], B[0], A[1]};
}
}  // namespace

void GemmOperator::reference(const ResolvedWorkload& w, const std::vector<DeviceTensor>& inputs,
                             const std::vector<float*>& outputs, cudaStream_t stream) const {
  Dims d = dims(w);
  gemm_reference(static_cast<const __nv_bfloat16*>(inputs.at(0).data),
                 static_cast<const __nv_bfloat16*>(inputs.at(1).data), outputs.at(0), d.M, d.N, d.K, stream);
}

std::unique_ptr<Baseline> GemmOperator::make_baseline(const ResolvedWorkload& w) const {
  Dims d = dims(w);
  return std::make_unique<GemmCublasLt>(d.M, d.N, d.K);
}

std::size_t GemmOperator::row_scratch_bytes(const ResolvedWorkload&, int64_t rows) const {
  return static_cast<std::size_t>(rows) * sizeof(int64_t);
}

void GemmOperator::reference_rows(const ResolvedWorkload& w, const std::vector<DeviceTensor>& inputs,
                                  const std::vector<RowSample>& samples, const std::vector<float*>& out, void* scratch,
                                  cudaStream_t stream) const {
  Dims d = dims(w);
  auto* rows = static_cast<int64_t*>(scratch);
  for (std::size_t k = 0; k < samples.size(); ++k) {
    const auto& r = samples[k].rows;
    PTXB_CUDA_CALL(cudaMemcpyAsync(rows, r.data(), r.size() * sizeof(int64_t), cudaMemcpyHostToDevice, stream));
    gemm_reference_rows(static_cast<const __nv_bfloat16*>(inputs.at(0).data),
                        static_cast<const __nv_bfloat16*>(inputs.at(1).data), rows, static_cast<int64_t>(r.size()),
                        out.at(k), d.N, d.K, stream);
  }
}

double GemmOperator::flops(const ResolvedWorkload& w) const {
  Dims d = dims(w);
  return 2.0 * static_cast<double>(d.M) * static_cast<double>(d.N) * static_cast<double>(d.K);
}

}  // namespace ptxbench
