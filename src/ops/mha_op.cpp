#include "ops/mha_op.h"

#include "baseline/mha_cudnn.h"
#include "common/error.h"
#include "reference/mha_reference.h"

namespace ptxbench {
namespace {

using bf16 = __nv_bfloat16;

// The shape every op of this family shares, checked against the definition: the named tensors in
// ABI order, [B, H, S, D] bf16 except LSE ([B, H, S] fp32).
MhaShape shape_of(const ResolvedWorkload& w, const std::vector<std::string>& names, bool causal) {
  PTXB_ENSURE(w.tensors.size() == names.size(), "ops",
              "attention expects " + std::to_string(names.size()) + " tensors");
  const auto& q = w.tensors.at(0).shape;
  PTXB_ENSURE(q.size() == 4, "ops", "attention expects Q[B, H, S, D]");
  MhaShape s{q[0], q[1], q[2], q[3], causal};
  for (std::size_t i = 0; i < names.size(); ++i) {
    const TensorSpec& t = w.tensors[i];
    const bool lse = names[i] == "LSE";
    std::vector<int64_t> want = lse ? std::vector<int64_t>{s.B, s.H, s.S} : q;
    PTXB_ENSURE(t.name == names[i] && t.shape == want && t.dtype == (lse ? DType::f32 : DType::bf16), "ops",
                "attention tensor " + std::to_string(i) + " must be " + names[i] +
                    (lse ? "[B, H, S] fp32" : "[B, H, S, D] bf16") + ", got " + t.name + t.shape_text());
  }
  return s;
}

AttentionDims dims_of(const MhaShape& s) { return {s.B * s.H, s.S, s.D, s.causal}; }

double forward_flops(const MhaShape& s) {
  double f = 4.0 * double(s.B) * double(s.H) * double(s.S) * double(s.S) * double(s.D);
  return s.causal ? f / 2 : f;
}

const std::vector<std::string> kFwdNames = {"Q", "K", "V", "O", "LSE"};
const std::vector<std::string> kBwdNames = {"Q", "K", "V", "O", "dO", "LSE", "dQ", "dK", "dV"};

template <typename T>
const T* in(const std::vector<DeviceTensor>& inputs, std::size_t i) {
  return static_cast<const T*>(inputs.at(i).data);
}

}  // namespace

void MhaFwdOperator::reference(const ResolvedWorkload& w, const std::vector<DeviceTensor>& inputs,
                               const std::vector<float*>& outputs, cudaStream_t stream) const {
  MhaShape s = shape_of(w, kFwdNames, m_causal);
  mha_forward_reference(in<bf16>(inputs, 0), in<bf16>(inputs, 1), in<bf16>(inputs, 2), outputs.at(0), outputs.at(1),
                        dims_of(s), stream);
}

std::unique_ptr<Baseline> MhaFwdOperator::make_baseline(const ResolvedWorkload& w) const {
  return std::make_unique<MhaFwdCudnn>(shape_of(w, kFwdNames, m_causal));
}

double MhaFwdOperator::flops(const ResolvedWorkload& w) const {
  return forward_flops(shape_of(w, kFwdNames, m_causal));
}

void MhaBwdOperator::make_inputs(const ResolvedWorkload& w, const std::vector<DeviceTensor>& inputs, uint64_t seed,
                                 cudaStream_t stream) const {
  MhaShape s = shape_of(w, kBwdNames, m_causal);
  Operator::make_inputs(w, inputs, seed, stream);  // Q, K, V, dO per their samplers (O, LSE overwritten)
  auto derived = [&](const char* name) {
    auto it = w.workload.inputs.find(name);
    return it != w.workload.inputs.end() && it->second.kind == "derived";
  };
  PTXB_ENSURE(derived("O") == derived("LSE"), "ops", "a backward workload derives both O and LSE or neither");
  if (!derived("O")) return;
  mha_forward_reference(in<bf16>(inputs, 0), in<bf16>(inputs, 1), in<bf16>(inputs, 2),
                        static_cast<bf16*>(inputs.at(3).data), static_cast<float*>(inputs.at(5).data), dims_of(s),
                        stream);
}

void MhaBwdOperator::reference(const ResolvedWorkload& w, const std::vector<DeviceTensor>& inputs,
                               const std::vector<float*>& outputs, cudaStream_t stream) const {
  MhaShape s = shape_of(w, kBwdNames, m_causal);
  mha_backward_reference(in<bf16>(inputs, 0), in<bf16>(inputs, 1), in<bf16>(inputs, 2), in<bf16>(inputs, 3),
                         in<bf16>(inputs, 4), in<float>(inputs, 5), outputs.at(0), outputs.at(1), outputs.at(2),
                         dims_of(s), stream);
}

std::unique_ptr<Baseline> MhaBwdOperator::make_baseline(const ResolvedWorkload& w) const {
  return std::make_unique<MhaBwdCudnn>(shape_of(w, kBwdNames, m_causal));
}

double MhaBwdOperator::flops(const ResolvedWorkload& w) const {
  return 2.5 * forward_flops(shape_of(w, kBwdNames, m_causal));
}

}  // namespace ptxbench
