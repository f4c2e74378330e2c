#include "gpu/sass_patching.h"

#include <cuda.h>
#include <cupti_profiler_target.h>
#include <cupti_sass_metrics.h>
#include <cupti_target.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <limits>
#include <map>
#include <utility>

#include "gpu/cuda_call.h"
#include "gpu/cupti_call.h"
#include "gpu/driver_entry.h"

namespace ptxbench {
namespace {

constexpr uint64_t kUnset = std::numeric_limits<uint64_t>::max();

// CUPTI parameter blocks: zeroed, with their size set.
template <class P>
P params(std::size_t struct_size) {
  P p{};
  p.structSize = struct_size;
  return p;
}

std::string chip_name(int device) {
  auto p = params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  p.deviceIndex = static_cast<size_t>(device);
  PTXB_CUPTI_CALL(cuptiDeviceGetChipName(&p));
  return p.pChipName ? p.pChipName : "";
}

// The driver must be initialized first (else CUPTI_ERROR_UNKNOWN); no context is needed yet.
void profiler_initialize() {
  int devices = 0;
  PTXB_CUDA_CALL(cudaGetDeviceCount(&devices));
  auto p = params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
  PTXB_CUPTI_CALL(cuptiProfilerInitialize(&p));
}

void profiler_deinitialize() noexcept {
  auto p = params<CUpti_Profiler_DeInitialize_Params>(CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE);
  cuptiProfilerDeInitialize(&p);
}

CUcontext current_context() {
  CUcontext ctx = nullptr;
  if (driver_function<CUresult (*)(CUcontext*)>("cuCtxGetCurrent", 12000)(&ctx) != CUDA_SUCCESS || !ctx)
    throw EnvironmentError("CUDA driver", "no current context for SASS counting");
  return ctx;
}

void require_sass_metrics_support(int device) {
  auto p = params<CUpti_Profiler_DeviceSupported_Params>(CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE);
  p.cuDevice = device;
  p.api = CUPTI_PROFILER_SASS_METRICS;
  PTXB_CUPTI_CALL(cuptiProfilerDeviceSupported(&p));
  if (p.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
    throw EnvironmentError("CUPTI", "SASS metrics are not supported on device " + std::to_string(device) +
                                        " (architecture " + std::to_string(p.architecture) + ", vGPU " +
                                        std::to_string(p.vGpu) + ", confidential compute " +
                                        std::to_string(p.confidentialCompute) + ")");
}

uint64_t metric_id(const std::string& chip, const char* name) {
  auto p = params<CUpti_SassMetrics_GetProperties_Params>(CUpti_SassMetrics_GetProperties_Params_STRUCT_SIZE);
  p.pChipName = chip.c_str();
  p.pMetricName = name;
  CUptiResult status = cuptiSassMetricsGetProperties(&p);
  if (status != CUPTI_SUCCESS)
    throw EnvironmentError("CUPTI", std::string("SASS metric ") + name + " is not offered on chip " + chip +
                                        " (`ptxbench-runner sass-metrics` lists them)");
  return p.metric.metricId;
}

}  // namespace

SassPatching::SassPatching(int device) : m_device(device) {
  const char* lazy = std::getenv("PTXBENCH_SASS_LAZY");  // diagnostics: 0 patches every function at start()
  m_lazy = !(lazy && std::string(lazy) == "0");
  // Order matters (each seen on the H200): the profiler is initialized after the driver and
  // before the context exists (a context created earlier is never patched: no records), and
  // configured once the context exists (CUPTI_ERROR_INVALID_CONTEXT otherwise).
  profiler_initialize();
  try {
    require_sass_metrics_support(device);
    PTXB_CUDA_CALL(cudaSetDevice(device));
    PTXB_CUDA_CALL(cudaFree(nullptr));
    m_context = current_context();
    std::string chip = chip_name(device);
    m_warp_id = metric_id(chip, kCuptiWarpMetric);
    m_thread_true_id = metric_id(chip, kCuptiThreadTrueMetric);
    CUpti_SassMetrics_Config configs[2] = {{m_warp_id, CUPTI_SASS_METRICS_OUTPUT_GRANULARITY_GPU},
                                           {m_thread_true_id, CUPTI_SASS_METRICS_OUTPUT_GRANULARITY_GPU}};
    auto p = params<CUpti_SassMetricsSetConfig_Params>(CUpti_SassMetricsSetConfig_Params_STRUCT_SIZE);
    p.numOfMetricConfig = 2;
    p.pConfigs = configs;
    p.deviceIndex = static_cast<uint32_t>(device);
    PTXB_CUPTI_CALL(cuptiSassMetricsSetConfig(&p));
    m_configured = true;
  } catch (...) {
    profiler_deinitialize();
    throw;
  }
}

SassPatching::~SassPatching() {
  if (m_enabled) {
    auto p = params<CUpti_SassMetricsDisable_Params>(CUpti_SassMetricsDisable_Params_STRUCT_SIZE);
    p.ctx = m_context;
    cuptiSassMetricsDisable(&p);
  }
  if (m_configured) {
    auto p = params<CUpti_SassMetricsUnsetConfig_Params>(CUpti_SassMetricsUnsetConfig_Params_STRUCT_SIZE);
    p.deviceIndex = static_cast<uint32_t>(m_device);
    cuptiSassMetricsUnsetConfig(&p);
  }
  profiler_deinitialize();
}

void SassPatching::start() {
  auto p = params<CUpti_SassMetricsEnable_Params>(CUpti_SassMetricsEnable_Params_STRUCT_SIZE);
  p.ctx = m_context;
  p.enableLazyPatching = m_lazy ? 1 : 0;
  PTXB_CUPTI_CALL(cuptiSassMetricsEnable(&p));
  m_enabled = true;
}

std::vector<PcCount> SassPatching::stop() {
  auto props = params<CUpti_SassMetricsGetDataProperties_Params>(CUpti_SassMetricsGetDataProperties_Params_STRUCT_SIZE);
  props.ctx = m_context;
  PTXB_CUPTI_CALL(cuptiSassMetricsGetDataProperties(&props));
  std::map<std::pair<std::string, uint32_t>, PcCount> by_pc;
  m_last_records = props.numOfPatchedInstructionRecords;
  m_last_instances = props.numOfInstances;
  if (props.numOfPatchedInstructionRecords > 0) {
    // Each record carries numOfInstances values per metric; room for both metrics is left in
    // case the values of one instruction's metrics share a record, and unused slots keep kUnset.
    const std::size_t records = props.numOfPatchedInstructionRecords;
    const std::size_t stride = props.numOfInstances * 2;
    std::vector<CUpti_SassMetrics_InstanceValue> values(records * stride, CUpti_SassMetrics_InstanceValue{kUnset, 0});
    std::vector<CUpti_SassMetrics_Data> data(records);
    for (std::size_t i = 0; i < records; ++i) {
      data[i].structSize = sizeof(CUpti_SassMetrics_Data);
      data[i].pInstanceValues = &values[i * stride];
    }
    auto flush = params<CUpti_SassMetricsFlushData_Params>(CUpti_SassMetricsFlushData_Params_STRUCT_SIZE);
    flush.ctx = m_context;
    flush.numOfPatchedInstructionRecords = records;
    flush.numOfInstances = props.numOfInstances;
    flush.pMetricsData = data.data();
    PTXB_CUPTI_CALL(cuptiSassMetricsFlushData(&flush));
    for (std::size_t i = 0; i < records; ++i) {
      std::string function = data[i].functionName ? data[i].functionName : "";
      std::free(const_cast<char*>(data[i].functionName));  // CUPTI allocates it for the caller
      PcCount& c = by_pc[{function, data[i].pcOffset}];
      c.function = function;
      c.pc = data[i].pcOffset;
      for (std::size_t k = 0; k < stride; ++k) {
        const auto& v = data[i].pInstanceValues[k];
        if (v.metricId == m_warp_id) c.warp_executed += v.value;
        else if (v.metricId == m_thread_true_id) c.thread_true += v.value;
      }
    }
  }
  auto disable = params<CUpti_SassMetricsDisable_Params>(CUpti_SassMetricsDisable_Params_STRUCT_SIZE);
  disable.ctx = m_context;
  PTXB_CUPTI_CALL(cuptiSassMetricsDisable(&disable));
  m_enabled = false;
  if (disable.numOfDroppedRecords > 0)
    throw Error("CUPTI", std::to_string(disable.numOfDroppedRecords) + " SASS metric records were dropped");
  std::vector<PcCount> out;
  out.reserve(by_pc.size());
  for (auto& [key, c] : by_pc) out.push_back(std::move(c));
  return out;
}

std::vector<std::string> SassPatching::metric_names(int device) {
  profiler_initialize();
  std::vector<std::string> out;
  try {
    std::string chip = chip_name(device);
    auto n = params<CUpti_SassMetrics_GetNumOfMetrics_Params>(CUpti_SassMetrics_GetNumOfMetrics_Params_STRUCT_SIZE);
    n.pChipName = chip.c_str();
    PTXB_CUPTI_CALL(cuptiSassMetricsGetNumOfMetrics(&n));
    std::vector<CUpti_SassMetrics_MetricDetails> details(n.numOfMetrics);
    auto m = params<CUpti_SassMetrics_GetMetrics_Params>(CUpti_SassMetrics_GetMetrics_Params_STRUCT_SIZE);
    m.pChipName = chip.c_str();
    m.numOfMetrics = n.numOfMetrics;
    m.pMetricsList = details.data();
    PTXB_CUPTI_CALL(cuptiSassMetricsGetMetrics(&m));
    for (const auto& d : details)
      out.push_back(std::string(d.pMetricName ? d.pMetricName : "?") + ": " +
                    (d.pMetricDescription ? d.pMetricDescription : ""));
  } catch (...) {
    profiler_deinitialize();
    throw;
  }
  profiler_deinitialize();
  return out;
}

}  // namespace ptxbench
