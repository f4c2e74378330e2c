#include "baseline/cudnn_engine_config.h"

#include <array>

namespace ptxbench::cudnn {
namespace {

const char* behavior_note_text(cudnnBackendBehaviorNote_t n) {
  switch (n) {
    case CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION: return "runtime_compilation";
    case CUDNN_BEHAVIOR_NOTE_REQUIRES_FILTER_INT8x32_REORDER: return "filter_int8x32_reorder";
    case CUDNN_BEHAVIOR_NOTE_REQUIRES_BIAS_INT8x32_REORDER: return "bias_int8x32_reorder";
    case CUDNN_BEHAVIOR_NOTE_SUPPORTS_CUDA_GRAPH_NATIVE_API: return "cuda_graph_native";
    case CUDNN_BEHAVIOR_NOTE_CUBLASLT_DEPENDENCY: return "cublaslt_dependency";
    default: return "behavior?";
  }
}

const char* numerical_note_text(cudnnBackendNumericalNote_t n) {
  switch (n) {
    case CUDNN_NUMERICAL_NOTE_TENSOR_CORE: return "tensor_core";
    case CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS: return "down_convert_inputs";
    case CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION: return "reduced_precision_reduction";
    case CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC: return "nondeterministic";
    case CUDNN_NUMERICAL_NOTE_STRICT_NAN_PROP: return "strict_nan_prop";
    default: return "numerical?";
  }
}

}  // namespace

PlanChoice inspect_engine_config(cudnnBackendDescriptor_t config) {
  PlanChoice c;
  Descriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR, "engine of a heuristic result");
  cudnnBackendDescriptor_t raw = engine.get();
  int64_t n = 0;
  if (cudnnBackendGetAttribute(config, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &raw) !=
      CUDNN_STATUS_SUCCESS)
    return c;
  cudnnBackendGetAttribute(engine.get(), CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, &c.engine);

  std::vector<Descriptor> knobs;
  std::vector<cudnnBackendDescriptor_t> knob_raw;
  for (int i = 0; i < CUDNN_KNOB_TYPE_COUNTS; ++i) {
    knobs.emplace_back(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, "knob choice");
    knob_raw.push_back(knobs.back().get());
  }
  int64_t knob_count = 0;
  if (cudnnBackendGetAttribute(config, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                               CUDNN_KNOB_TYPE_COUNTS, &knob_count, knob_raw.data()) == CUDNN_STATUS_SUCCESS) {
    for (int64_t i = 0; i < knob_count && i < CUDNN_KNOB_TYPE_COUNTS; ++i) {
      cudnnBackendKnobType_t type = CUDNN_KNOB_TYPE_COUNTS;
      int64_t value = -1;
      cudnnBackendGetAttribute(knob_raw[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &n, &type);
      cudnnBackendGetAttribute(knob_raw[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &n, &value);
      c.knobs.emplace_back(static_cast<int64_t>(type), value);
    }
  }

  std::array<cudnnBackendBehaviorNote_t, CUDNN_BEHAVIOR_NOTE_TYPE_COUNT> behavior{};
  if (cudnnBackendGetAttribute(engine.get(), CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
                               CUDNN_BEHAVIOR_NOTE_TYPE_COUNT, &n, behavior.data()) == CUDNN_STATUS_SUCCESS)
    for (int64_t i = 0; i < n && i < CUDNN_BEHAVIOR_NOTE_TYPE_COUNT; ++i)
      c.notes.emplace_back(behavior_note_text(behavior[i]));
  std::array<cudnnBackendNumericalNote_t, CUDNN_NUMERICAL_NOTE_TYPE_COUNT> numerical{};
  if (cudnnBackendGetAttribute(engine.get(), CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                               CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &n, numerical.data()) == CUDNN_STATUS_SUCCESS)
    for (int64_t i = 0; i < n && i < CUDNN_NUMERICAL_NOTE_TYPE_COUNT; ++i)
      c.notes.emplace_back(numerical_note_text(numerical[i]));
  return c;
}


}  // namespace ptxbench::cudnn
