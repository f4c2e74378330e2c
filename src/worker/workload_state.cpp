#include "worker/workload_state.h"

#include "gpu/checksum.h"
#include "gpu/cuda_call.h"

namespace ptxbench {
namespace {
constexpr std::size_t kGuardBytes = 64 << 10;
}

bool OutputCheck::passed() const {
  if (!problems.empty()) return false;
  for (const auto& t : tensors)
    if (!t.passed) return false;
  return true;
}

WorkloadState::WorkloadState(ResolvedWorkload workload, std::unique_ptr<Operator> op)
    : m_workload(std::move(workload)), m_op(std::move(op)) {
  PTXB_CUDA_CALL(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking));
  for (const auto& t : m_workload.tensors) {
    if (t.is_output) {
      m_output_specs.push_back(t);
      m_outputs.emplace_back(t.bytes(), kGuardBytes);
      m_reference.emplace_back(static_cast<std::size_t>(t.numel()) * sizeof(float));
      m_reference_host.emplace_back(static_cast<std::size_t>(t.numel()));
      m_baseline_outputs.emplace_back(t.bytes());
    } else {
      m_input_specs.push_back(t);
      m_inputs.emplace_back(t.bytes(), 0);
    }
  }
  m_baseline = m_op->make_baseline(m_workload);
  for (std::size_t i = 0; i < m_inputs.size(); ++i)
    m_baseline_args.push_back(DeviceTensor{m_inputs[i].data(), m_input_specs[i]}.view());
  for (std::size_t i = 0; i < m_outputs.size(); ++i)
    m_baseline_args.push_back(DeviceTensor{m_baseline_outputs[i].get(), m_output_specs[i]}.view());
}

WorkloadState::~WorkloadState() {
  if (m_stream) PTXB_CUDA_CALL_NOEXCEPT(cudaStreamDestroy(m_stream));
}

void WorkloadState::prepare_trial(uint64_t seed) {
  std::vector<DeviceTensor> inputs;
  for (std::size_t i = 0; i < m_inputs.size(); ++i) inputs.push_back({m_inputs[i].data(), m_input_specs[i]});
  m_op->make_inputs(m_workload, inputs, seed, m_stream);
  std::vector<float*> refs;
  for (auto& r : m_reference) refs.push_back(r.as<float>());
  m_op->reference(m_workload, inputs, refs, m_stream);
  for (std::size_t i = 0; i < m_reference.size(); ++i)
    PTXB_CUDA_CALL(cudaMemcpyAsync(m_reference_host[i].data(), m_reference[i].get(), m_reference[i].bytes(),
                                   cudaMemcpyDeviceToHost, m_stream));
  for (auto& o : m_outputs) o.fill_guards(m_stream);
  PTXB_CUDA_CALL(cudaStreamSynchronize(m_stream));
  m_input_fingerprints.clear();
  for (const auto& in : m_inputs) m_input_fingerprints.push_back(device_checksum(in.data(), in.payload_bytes(), m_stream));
}

OutputCheck WorkloadState::compare(const std::vector<const void*>& device_outputs, const Tolerance& tol,
                                   unsigned threads) {
  OutputCheck check;
  for (std::size_t i = 0; i < device_outputs.size(); ++i) {
    std::vector<unsigned char> host(m_output_specs[i].bytes());
    PTXB_CUDA_CALL(cudaMemcpyAsync(host.data(), device_outputs[i], host.size(), cudaMemcpyDeviceToHost, m_stream));
    PTXB_CUDA_CALL(cudaStreamSynchronize(m_stream));
    check.tensors.push_back(compare_tensor(host.data(), m_reference_host[i].data(), m_output_specs[i], tol, threads));
  }
  for (std::size_t i = 0; i < m_inputs.size(); ++i)
    if (device_checksum(m_inputs[i].data(), m_inputs[i].payload_bytes(), m_stream) != m_input_fingerprints[i])
      check.problems.push_back("input " + m_input_specs[i].name + " was modified (inputs are read-only)");
  return check;
}

OutputCheck WorkloadState::check_candidate(const Tolerance& tol, unsigned threads) {
  std::vector<const void*> outs;
  for (const auto& o : m_outputs) outs.push_back(o.data());
  OutputCheck check = compare(outs, tol, threads);
  for (std::size_t i = 0; i < m_outputs.size(); ++i) {
    std::string where = m_outputs[i].check_guards(m_stream);
    if (!where.empty()) check.problems.push_back("wrote out of bounds of output " + m_output_specs[i].name + ", " + where);
  }
  return check;
}

OutputCheck WorkloadState::check_baseline(const Tolerance& tol, unsigned threads) {
  std::vector<const void*> outs;
  for (const auto& o : m_baseline_outputs) outs.push_back(o.get());
  return compare(outs, tol, threads);
}

std::vector<WireTensor> WorkloadState::wire_tensors() const {
  std::vector<WireTensor> out;
  for (std::size_t i = 0; i < m_inputs.size(); ++i) out.push_back({m_input_specs[i], m_inputs[i].ipc_handle(), m_inputs[i].offset()});
  for (std::size_t i = 0; i < m_outputs.size(); ++i)
    out.push_back({m_output_specs[i], m_outputs[i].ipc_handle(), m_outputs[i].offset()});
  return out;
}

TimedTarget WorkloadState::baseline_target() {
  TimedTarget t;
  t.call = [this](cudaStream_t s) {
    return m_baseline->run(m_baseline_args.data(), static_cast<int32_t>(m_baseline_args.size()), s);
  };
  t.poison = [this](cudaStream_t s) {
    for (auto& b : m_baseline_outputs) PTXB_CUDA_CALL(cudaMemsetAsync(b.get(), 0xff, b.bytes(), s));
  };
  return t;
}

std::string WorkloadState::baseline_name() const { return m_baseline->name(); }

}  // namespace ptxbench
