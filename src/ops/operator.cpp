#include "ops/operator.h"

#include "common/error.h"
#include "gpu/random_fill.h"
#include "ops/gemm_op.h"
#include "ops/gqa_op.h"
#include "ops/mha_op.h"

namespace ptxbench {

ptxb_tensor DeviceTensor::view() const {
  ptxb_tensor t{};
  t.data = data;
  t.dtype = static_cast<int32_t>(spec.dtype);
  t.ndim = static_cast<int32_t>(spec.shape.size());
  for (std::size_t i = 0; i < spec.shape.size(); ++i) {
    t.shape[i] = spec.shape[i];
    t.stride[i] = spec.strides[i];
  }
  return t;
}

namespace {
InputSampler sampler_of(const ResolvedWorkload& w, const std::string& name) {
  auto it = w.workload.inputs.find(name);
  return it == w.workload.inputs.end() ? InputSampler{} : it->second;
}

void fill_input(const ResolvedWorkload& w, const DeviceTensor& t, std::size_t index, uint64_t seed, cudaStream_t stream) {
  InputSampler s = sampler_of(w, t.spec.name);
  if (s.kind == "scalar") fill_constant(t.data, t.spec.dtype, t.spec.numel(), s.value, stream);
  else fill_normal(t.data, t.spec.dtype, t.spec.numel(), derive_seed(seed, index), stream);
}
}  // namespace

void Operator::make_inputs(const ResolvedWorkload& w, const std::vector<DeviceTensor>& inputs, uint64_t seed,
                           cudaStream_t stream) const {
  for (std::size_t i = 0; i < inputs.size(); ++i) fill_input(w, inputs[i], i, seed, stream);
}

std::vector<std::size_t> Operator::fresh_inputs(const ResolvedWorkload& w) const {
  std::vector<std::size_t> out;
  std::size_t i = 0;
  for (const auto& t : w.tensors) {
    if (t.is_output) continue;
    std::string kind = sampler_of(w, t.name).kind;
    if (kind != "scalar" && kind != "derived") out.push_back(i);
    ++i;
  }
  return out;
}

void Operator::refresh_inputs(const ResolvedWorkload& w, const std::vector<DeviceTensor>& inputs, uint64_t seed,
                              cudaStream_t stream) const {
  for (std::size_t i : fresh_inputs(w)) fill_input(w, inputs.at(i), i, seed, stream);
}

std::optional<std::vector<double>> Operator::fixed_values(const ResolvedWorkload& w, std::size_t input) const {
  std::size_t seen = 0;
  for (const auto& t : w.tensors) {
    if (t.is_output) continue;
    if (seen++ != input) continue;
    InputSampler s = sampler_of(w, t.name);
    if (s.kind == "scalar") return std::vector<double>(static_cast<std::size_t>(t.numel()), s.value);
    return std::nullopt;
  }
  throw Error("ops", "no input " + std::to_string(input));
}

int64_t Operator::row_length(const ResolvedWorkload& w, std::size_t o) const {
  std::size_t seen = 0;
  for (const auto& t : w.tensors) {
    if (!t.is_output) continue;
    if (seen++ == o) return t.shape.empty() ? 1 : t.shape.back();
  }
  throw Error("ops", "no output " + std::to_string(o));
}

double Operator::min_bytes(const ResolvedWorkload& w) const {
  double b = 0;
  for (const auto& t : w.tensors) b += static_cast<double>(t.bytes());
  return b;
}

std::unique_ptr<Operator> make_operator(const std::string& op_type) {
  if (op_type == "gemm") return std::make_unique<GemmOperator>();
  if (op_type == "mha_fwd" || op_type == "mha_fwd_causal") return std::make_unique<MhaFwdOperator>(op_type == "mha_fwd_causal");
  if (op_type == "mha_bwd" || op_type == "mha_bwd_causal") return std::make_unique<MhaBwdOperator>(op_type == "mha_bwd_causal");
  if (op_type == "gqa_paged_decode") return std::make_unique<GqaOperator>(GqaProblem::Kind::paged_decode);
  if (op_type == "gqa_paged_prefill_causal") return std::make_unique<GqaOperator>(GqaProblem::Kind::paged_prefill_causal);
  if (op_type == "gqa_ragged_prefill_causal") return std::make_unique<GqaOperator>(GqaProblem::Kind::ragged_prefill_causal);
  throw InputError("ops", "no trusted implementation for op_type '" + op_type +
                              "' (supported: gemm, mha_fwd, mha_fwd_causal, mha_bwd, mha_bwd_causal, gqa_paged_decode, "
                              "gqa_paged_prefill_causal, gqa_ragged_prefill_causal)");
}

}  // namespace ptxbench
