#include "evaluator/workload_state.h"

#include "gpu/checksum.h"
#include "gpu/cuda_call.h"

namespace ptxbench {
namespace {
constexpr std::size_t kGuardBytes = 64 << 10;
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
      m_baseline_outputs.emplace_back(t.bytes(), kGuardBytes);
    } else {
      m_input_specs.push_back(t);
      m_inputs.emplace_back(t.bytes(), 0);
    }
  }
  for (std::size_t i = 0; i < m_inputs.size(); ++i)
    m_baseline_args.push_back(DeviceTensor{m_inputs[i].data(), m_input_specs[i]}.view());
  for (std::size_t i = 0; i < m_outputs.size(); ++i)
    m_baseline_args.push_back(DeviceTensor{m_baseline_outputs[i].data(), m_output_specs[i]}.view());
}

WorkloadState::~WorkloadState() {
  if (m_stream) PTXB_CUDA_CALL_NOEXCEPT(cudaStreamDestroy(m_stream));
}

std::vector<DeviceTensor> WorkloadState::input_views() const {
  std::vector<DeviceTensor> inputs;
  for (std::size_t i = 0; i < m_inputs.size(); ++i) inputs.push_back({m_inputs[i].data(), m_input_specs[i]});
  return inputs;
}

void WorkloadState::take_fingerprints() {
  m_input_fingerprints.clear();
  for (const auto& in : m_inputs) m_input_fingerprints.push_back(device_checksum(in.data(), in.payload_bytes(), m_stream));
}

void WorkloadState::begin_trial(uint64_t seed) {
  m_op->make_inputs(m_workload, input_views(), seed, m_stream);
  for (auto& o : m_outputs) o.fill_guards(m_stream);
  PTXB_CUDA_CALL(cudaStreamSynchronize(m_stream));
}

void WorkloadState::prepare_call(std::optional<uint64_t> seed, Side side,
                                 const std::function<void(cudaStream_t)>& flush, bool fingerprint) {
  if (seed) m_op->refresh_inputs(m_workload, input_views(), *seed, m_stream);
  if (side == Side::candidate) {
    for (std::size_t i = 0; i < m_outputs.size(); ++i)
      PTXB_CUDA_CALL(cudaMemsetAsync(m_outputs[i].data(), 0xff, m_output_specs[i].bytes(), m_stream));
  } else {
    for (auto& b : m_baseline_outputs) PTXB_CUDA_CALL(cudaMemsetAsync(b.data(), 0xff, b.payload_bytes(), m_stream));
  }
  if (fingerprint) take_fingerprints();
  flush(m_stream);
  PTXB_CUDA_CALL(cudaStreamSynchronize(m_stream));
}

void WorkloadState::compute_reference() {
  std::vector<float*> refs;
  for (auto& r : m_reference) refs.push_back(r.as<float>());
  m_op->reference(m_workload, input_views(), refs, m_stream);
  for (std::size_t i = 0; i < m_reference.size(); ++i)
    PTXB_CUDA_CALL(cudaMemcpyAsync(m_reference_host[i].data(), m_reference[i].get(), m_reference[i].bytes(),
                                   cudaMemcpyDeviceToHost, m_stream));
  PTXB_CUDA_CALL(cudaStreamSynchronize(m_stream));
}

OutputCheck WorkloadState::spot_check(std::mt19937_64& rng, int rows, const Tolerance& tol) {
  std::vector<RowSample> samples;
  std::vector<int64_t> lengths;
  std::size_t total_floats = 0;
  for (std::size_t o = 0; o < m_outputs.size(); ++o) {
    const int64_t len = m_op->row_length(m_workload, o), count = m_output_specs[o].numel() / len;
    RowSample s{o, {}};
    for (int r = 0; r < rows; ++r) s.rows.push_back(static_cast<int64_t>(rng() % static_cast<uint64_t>(count)));
    samples.push_back(std::move(s));
    lengths.push_back(len);
    total_floats += static_cast<std::size_t>(rows * len);
  }
  std::size_t scratch = m_op->row_scratch_bytes(m_workload, rows);
  if (m_row_scratch.bytes() < scratch) m_row_scratch = DeviceBuffer(scratch);
  if (m_row_reference.bytes() < total_floats * sizeof(float)) m_row_reference = DeviceBuffer(total_floats * sizeof(float));
  std::vector<float*> out;
  for (std::size_t o = 0, at = 0; o < samples.size(); at += static_cast<std::size_t>(rows * lengths[o]), ++o)
    out.push_back(m_row_reference.as<float>() + at);
  m_op->reference_rows(m_workload, input_views(), samples, out, m_row_scratch.get(), m_stream);
  std::vector<float> reference(total_floats);
  PTXB_CUDA_CALL(cudaMemcpyAsync(reference.data(), m_row_reference.get(), total_floats * sizeof(float),
                                 cudaMemcpyDeviceToHost, m_stream));
  // The candidate's sampled rows, gathered row by row (they are scattered through the output).
  std::vector<std::vector<unsigned char>> got(samples.size());
  for (std::size_t o = 0; o < samples.size(); ++o) {
    const std::size_t row_bytes = static_cast<std::size_t>(lengths[o]) * dtype_size(m_output_specs[o].dtype);
    got[o].resize(row_bytes * samples[o].rows.size());
    const auto* base = static_cast<const unsigned char*>(m_outputs[o].data());
    for (std::size_t r = 0; r < samples[o].rows.size(); ++r)
      PTXB_CUDA_CALL(cudaMemcpyAsync(got[o].data() + r * row_bytes, base + static_cast<std::size_t>(samples[o].rows[r]) * row_bytes,
                                     row_bytes, cudaMemcpyDeviceToHost, m_stream));
  }
  PTXB_CUDA_CALL(cudaStreamSynchronize(m_stream));
  OutputCheck check;
  for (std::size_t o = 0, at = 0; o < samples.size(); at += static_cast<std::size_t>(rows * lengths[o]), ++o) {
    TensorSpec rows_spec{m_output_specs[o].name, m_output_specs[o].dtype, {rows, lengths[o]}, {lengths[o], 1}, true};
    check.tensors.push_back(compare_tensor(got[o].data(), reference.data() + at, rows_spec, tol, 1));
  }
  return check;
}

void WorkloadState::prepare_trial(uint64_t seed) {
  begin_trial(seed);
  compute_reference();
  take_fingerprints();
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
      check.problems.push_back({OutputProblemKind::input_modified,
                                "input " + m_input_specs[i].name + " was modified (inputs are read-only)"});
  return check;
}

void WorkloadState::poison_outputs() {
  for (std::size_t i = 0; i < m_outputs.size(); ++i)
    PTXB_CUDA_CALL(cudaMemsetAsync(m_outputs[i].data(), 0xff, m_output_specs[i].bytes(), m_stream));  // NaN
  PTXB_CUDA_CALL(cudaStreamSynchronize(m_stream));
}

OutputCheck WorkloadState::check_candidate(const Tolerance& tol, unsigned threads) {
  std::vector<const void*> outs;
  for (const auto& o : m_outputs) outs.push_back(o.data());
  OutputCheck check = compare(outs, tol, threads);
  for (std::size_t i = 0; i < m_outputs.size(); ++i) {
    std::string where = m_outputs[i].check_guards(m_stream);
    if (!where.empty())
      check.problems.push_back({OutputProblemKind::guard_written,
                                "wrote out of bounds of output " + m_output_specs[i].name + ", " + where});
  }
  return check;
}

OutputCheck WorkloadState::check_baseline(const Tolerance& tol, unsigned threads) {
  std::vector<const void*> outs;
  for (const auto& o : m_baseline_outputs) outs.push_back(o.data());
  return compare(outs, tol, threads);
}

WorkloadState::SharedTensors WorkloadState::shared_tensors(Side side) const {
  SharedTensors out;
  auto add = [&out](const TensorSpec& spec, const GuardedBuffer& b) {
    out.tensors.push_back({spec, static_cast<int>(out.fds.size()), b.allocation().bytes(), b.offset()});
    out.fds.push_back(b.allocation().export_fd());
  };
  for (std::size_t i = 0; i < m_inputs.size(); ++i) add(m_input_specs[i], m_inputs[i]);
  const std::vector<GuardedBuffer>& outputs = side == Side::candidate ? m_outputs : m_baseline_outputs;
  for (std::size_t i = 0; i < outputs.size(); ++i) add(m_output_specs[i], outputs[i]);
  return out;
}

TimedTarget WorkloadState::baseline_target() {
  if (!m_baseline) m_baseline = m_op->make_baseline(m_workload);
  TimedTarget t;
  t.call = [this](cudaStream_t s) {
    return m_baseline->run(m_baseline_args.data(), static_cast<int32_t>(m_baseline_args.size()), s);
  };
  t.poison = [this](cudaStream_t s) {
    for (auto& b : m_baseline_outputs) PTXB_CUDA_CALL(cudaMemsetAsync(b.data(), 0xff, b.payload_bytes(), s));
  };
  return t;
}


}  // namespace ptxbench
