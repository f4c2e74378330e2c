// The cuDNN graph (backend) API without cudnn-frontend: RAII descriptors, an operation-graph
// builder that remembers what it built (so a graph the engines reject can be printed), engine
// selection by heuristics with fallback, and plan execution through a variant pack. Graphs can
// also be planned without a GPU for a device described by its properties (probe_first_config).
//
// Debugging (no code change needed):
//   PTXBENCH_CUDNN_DEBUG=1     print each graph, every heuristic candidate and why its plan failed
//   CUDNN_LOGLEVEL_DBG=3 CUDNN_LOGDEST_DBG=stderr   cuDNN's own log (2 = warnings, 1 = errors)
#pragma once

#include <cudnn.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"

/// Throws LibraryCallError("cuDNN", ...) carrying the call text, the status name and
/// cudnnGetLastErrorString's detail when `expr` is not CUDNN_STATUS_SUCCESS.
#define PTXB_CUDNN_CALL(expr)                                                                   \
  do {                                                                                          \
    cudnnStatus_t ptxb_status_ = (expr);                                                        \
    if (ptxb_status_ != CUDNN_STATUS_SUCCESS)                                                   \
      ::ptxbench::cudnn::throw_status(ptxb_status_, #expr, __FILE__, __LINE__, "");             \
  } while (0)

namespace ptxbench::cudnn {

/// "CUDNN_STATUS_NOT_SUPPORTED: <cudnnGetLastErrorString>" (the detail only when cuDNN has one).
std::string status_text(cudnnStatus_t status);
[[noreturn]] void throw_status(cudnnStatus_t status, const char* call, const char* file, int line,
                               const std::string& subject);

/// The loaded library's version, e.g. "9.19.0" (cudnnGetVersion, not the headers').
std::string runtime_version();
/// cudnnGetVersion() as a number, e.g. 91900.
int64_t runtime_version_number();

/// True when the environment variable is set to something other than "" or "0".
bool env_flag(const char* name);
/// PTXBENCH_CUDNN_DEBUG: trace graph building and engine selection on stderr.
bool debug_enabled();

/// Owns one cudnnBackendDescriptor_t. `subject` names it in every error ("tensor 'S' (uid 103)").
class Descriptor {
 public:
  Descriptor() = default;
  Descriptor(cudnnBackendDescriptorType_t type, std::string subject);
  ~Descriptor();
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  Descriptor(Descriptor&& o) noexcept;
  Descriptor& operator=(Descriptor&& o) noexcept;

  [[nodiscard]] cudnnBackendDescriptor_t get() const noexcept { return m_desc; }
  [[nodiscard]] const std::string& subject() const noexcept { return m_subject; }

  /// cudnnBackendSetAttribute; throws naming the subject and `attr_text`.
  void set(cudnnBackendAttributeName_t attr, cudnnBackendAttributeType_t type, int64_t count, const void* values,
           const char* attr_text);
  /// The same, returning the status instead of throwing (for optional or deprecated attributes).
  cudnnStatus_t try_set(cudnnBackendAttributeName_t attr, cudnnBackendAttributeType_t type, int64_t count,
                        const void* values) noexcept;
  void finalize();
  cudnnStatus_t try_finalize() noexcept;

 private:
  cudnnBackendDescriptor_t m_desc = nullptr;
  std::string m_subject;
};

/// Device properties from cuDNN's JSON form (cuDNN 9.11+), for planning without a device: the keys
/// cudnn's own serialization writes (multiProcessorCount, smVersion, ...). Throws if cuDNN refuses.
Descriptor device_properties_from_json(const std::string& json);

/// Descriptor::set with the attribute's name as error text.
#define PTXB_CUDNN_SET(desc, attr, type, count, values) (desc).set((attr), (type), (count), (values), #attr)

/// Owns a cudnnHandle_t (created on the current device).
class Handle {
 public:
  Handle();
  ~Handle();
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  [[nodiscard]] cudnnHandle_t get() const noexcept { return m_handle; }

 private:
  cudnnHandle_t m_handle = nullptr;
};

/// What one tensor of a graph is; kept for printing the graph and building variant packs.
struct TensorInfo {
  std::string name;
  int64_t uid = 0;
  cudnnDataType_t dtype = CUDNN_DATA_FLOAT;
  std::vector<int64_t> dims, strides;
  bool is_virtual = false;
  bool by_value = false;
  int64_t ragged_offset = -1;  ///< uid of the tensor of per-batch element offsets (ragged layout), or -1
};

/// Per-batch problem sizes of a matmul taken from int32 [B,1,1,1] tensors (uids; -1 = none), for
/// variable sequence lengths: the tensor dims give the maximum, these the actual extents.
struct MatmulOverrides {
  int64_t m = -1, n = -1, k = -1;
};

/// Builds one operation graph node by node. Every tensor and operation descriptor is finalized as
/// it is added (a failure names the node) and kept alive as long as the builder.
class GraphBuilder {
 public:
  explicit GraphBuilder(std::string label);
  GraphBuilder(const GraphBuilder&) = delete;
  GraphBuilder& operator=(const GraphBuilder&) = delete;
  GraphBuilder(GraphBuilder&&) = default;
  GraphBuilder& operator=(GraphBuilder&&) = default;

  /// A tensor with a fixed `uid` (inputs, outputs, workspace tensors) or, for uid < 0, the next
  /// free one (intermediates). Alignment 16 bytes. Returns the uid.
  /// `ragged_offset` (a uid added before, or -1) makes it a ragged tensor: batch b starts at element
  /// offset[b] of the buffer instead of at b·stride[0] (CUDNN_ATTR_TENSOR_RAGGED_OFFSET_DESC).
  int64_t tensor(const std::string& name, cudnnDataType_t dtype, std::vector<int64_t> dims,
                 std::vector<int64_t> strides, bool is_virtual, int64_t uid = -1, int64_t ragged_offset = -1);
  /// A float scalar passed by value (dims and strides all 1, `rank` of them); its value lives in the
  /// builder and is what the variant pack points at.
  int64_t scalar(const std::string& name, float value, int64_t uid, int rank = 4);

  void matmul(const std::string& name, int64_t a, int64_t b, int64_t c, cudnnDataType_t compute = CUDNN_DATA_FLOAT,
              MatmulOverrides overrides = {});
  /// x → y, or (x, b) → y, or (x, b, t) → y for BINARY_SELECT (y = t ? x : b). `axis` for GEN_INDEX.
  void pointwise(const std::string& name, cudnnPointwiseMode_t mode, cudnnDataType_t compute, int64_t x, int64_t y,
                 int64_t b = -1, int64_t t = -1, std::optional<int64_t> axis = std::nullopt);
  void reduction(const std::string& name, cudnnReduceTensorOp_t op, int64_t x, int64_t y,
                 cudnnDataType_t compute = CUDNN_DATA_FLOAT);
  /// A view change (transpose through strides), no data movement.
  void reshape(const std::string& name, int64_t x, int64_t y);
  /// y (virtual [B, H, S, D] or its transpose) = the blocks of `container` ([num_blocks, H,
  /// block_size, D]) that `page_table` (int32 [B, 1, max_blocks, 1], possibly ragged) lists for
  /// each batch, `seq_len` (int32 [B, 1, 1, 1]) tokens of them (CUDNN_BACKEND_OPERATION_PAGED_CACHE_LOAD).
  void paged_cache_load(const std::string& name, int64_t container, int64_t page_table, int64_t seq_len, int64_t y);

  /// Finalizes the operation graph over every operation added so far.
  void finalize(cudnnHandle_t handle);
  [[nodiscard]] cudnnBackendDescriptor_t graph() const noexcept { return m_graph.get(); }

  [[nodiscard]] const TensorInfo& info(int64_t uid) const;
  /// Non-virtual tensors (what a variant pack must carry), in the order they were added.
  [[nodiscard]] std::vector<int64_t> io_uids() const;
  /// Host address of a by-value scalar's value; nullptr for other tensors.
  [[nodiscard]] const void* scalar_value(int64_t uid) const;
  /// One line per tensor and per operation, for logs and error messages.
  [[nodiscard]] std::string describe() const;
  [[nodiscard]] const std::string& label() const noexcept { return m_label; }

 private:
  cudnnBackendDescriptor_t tensor_desc(int64_t uid, const std::string& op) const;
  /// Finalizes the descriptor of a checked tensor or scalar and records it; returns its uid.
  int64_t add_tensor(TensorInfo info);
  void add_op(Descriptor op, std::string line);

  std::string m_label;
  std::vector<TensorInfo> m_infos;
  std::map<int64_t, std::size_t> m_index;      // uid -> position in m_infos / m_tensors
  std::vector<Descriptor> m_tensors;
  std::vector<Descriptor> m_sub_descs;        // pointwise/matmul/reduction descriptors of ops
  std::vector<Descriptor> m_ops;
  std::vector<std::string> m_op_lines;
  std::map<int64_t, std::unique_ptr<float>> m_scalars;  // stable addresses
  Descriptor m_graph;
  int64_t m_next_uid = 1000;
};

/// The engine configuration a plan was built from.
struct PlanChoice {
  int64_t engine = -1;           ///< CUDNN_ATTR_ENGINE_GLOBAL_INDEX
  std::vector<std::pair<int64_t, int64_t>> knobs;  ///< (cudnnBackendKnobType_t, value)
  std::vector<std::string> notes;  ///< behavior and numerical notes, e.g. "runtime_compilation"
  int64_t workspace_bytes = 0;
  std::string heur_mode;         ///< "A" or "FALLBACK"
  int candidate = -1;            ///< position in that heuristic's list
  int candidates = 0;            ///< length of that list
  /// "eng8 k24=3 k14=2 [runtime_compilation] ws=0 B (heur A #0 of 3)".
  [[nodiscard]] std::string describe() const;
};

/// An execution plan chosen by heuristics for one finalized graph.
class ExecutionPlan {
 public:
  ExecutionPlan() = default;
  /// Queries CUDNN_HEUR_MODE_A, then CUDNN_HEUR_MODE_FALLBACK, and keeps the first engine config
  /// whose plan finalizes. `forced_engine` >= 0 skips every other engine (PTXBENCH_CUDNN_ENGINE).
  /// With `device_props` (and a null handle) it plans for that device without one (deviceless).
  /// Throws an Error listing every candidate and why it failed when none does.
  static ExecutionPlan select(cudnnHandle_t handle, const GraphBuilder& graph, int64_t forced_engine = -1,
                              const Descriptor* device_props = nullptr);

  [[nodiscard]] cudnnBackendDescriptor_t get() const noexcept { return m_plan.get(); }
  [[nodiscard]] const PlanChoice& choice() const noexcept { return m_choice; }
  /// The plan's JSON representation (engine name and knobs), "" when cuDNN gives none.
  [[nodiscard]] std::string json() const;

 private:
  Descriptor m_config;
  Descriptor m_plan;
  PlanChoice m_choice;
};

/// What heuristics mode A's first engine config does for `graph` when planned for `device_props`
/// (no handle, no device): the status of the plan's finalize and cuDNN's explanation. Offline,
/// runtime-compiled engines (the flash-attention ones) compile the kernel with NVRTC and then need
/// a driver to load it: with the toolkit's stub libcuda, CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER
/// means the engine took the graph and compiled it.
struct PlanProbe {
  cudnnStatus_t status = CUDNN_STATUS_NOT_SUPPORTED;
  PlanChoice choice;
  std::string detail;
};
PlanProbe probe_first_config(const GraphBuilder& graph, const Descriptor& device_props);

/// Runs a plan with the given (uid, pointer) pairs and workspace. A variant pack is built on the
/// first call and rebuilt only when a pointer changes. Returns the status: it sits in the timed
/// path, so it never throws; the failure text is kept for last_error().
class PlanRunner {
 public:
  cudnnStatus_t run(cudnnHandle_t handle, const ExecutionPlan& plan, const std::vector<int64_t>& uids,
                    const std::vector<void*>& pointers, void* workspace) noexcept;
  /// The timed call of a baseline: binds `stream` to the handle, then run(). 0, or a CUDA error
  /// code with the failure on stderr after "ptxbench: <label>: " (the runner's error channel).
  int run_on_stream(cudnnHandle_t handle, cudaStream_t stream, const ExecutionPlan& plan, const std::vector<int64_t>& uids,
                    const std::vector<void*>& pointers, void* workspace, const std::string& label) noexcept;
  [[nodiscard]] const std::string& last_error() const noexcept { return m_last_error; }

 private:
  Descriptor m_pack;
  std::vector<void*> m_pointers;
  void* m_workspace = nullptr;
  std::string m_last_error;
};

}  // namespace ptxbench::cudnn
