#include "baseline/cudnn_graph.h"

#include "baseline/cudnn_engine_config.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <sstream>
#include <tuple>

namespace ptxbench::cudnn {
namespace {

const char* dtype_text(cudnnDataType_t t) {
  switch (t) {
    case CUDNN_DATA_FLOAT: return "f32";
    case CUDNN_DATA_HALF: return "f16";
    case CUDNN_DATA_BFLOAT16: return "bf16";
    case CUDNN_DATA_INT32: return "i32";
    case CUDNN_DATA_INT64: return "i64";
    case CUDNN_DATA_BOOLEAN: return "bool";
    default: return "dtype?";
  }
}

std::string list_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

void debug_line(const std::string& line) {
  if (debug_enabled()) std::fprintf(stderr, "[ptxbench cudnn] %s\n", line.c_str());
}

// One descriptor-valued attribute of an operation, with the attribute's name for error messages.
struct Link {
  cudnnBackendAttributeName_t attr;
  const char* attr_text;
  cudnnBackendDescriptor_t value;
};
#define PTXB_CUDNN_LINK(attr, value) Link{(attr), #attr, (value)}

// An operation descriptor of `type` ("<label>: op '<name>' (<kind>)" in errors) with `links` set
// in the order given, which is the order cudnn-frontend sets them.
Descriptor operation(cudnnBackendDescriptorType_t type, const std::string& label, const std::string& name,
                     const char* kind, std::initializer_list<Link> links) {
  Descriptor op(type, label + ": op '" + name + "' (" + kind + ")");
  for (const Link& l : links) op.set(l.attr, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &l.value, l.attr_text);
  return op;
}

}  // namespace

std::string status_text(cudnnStatus_t status) {
  std::string s = cudnnGetErrorString(status);
  char detail[4096] = {0};
  cudnnGetLastErrorString(detail, sizeof detail);
  if (detail[0]) s += std::string(": ") + detail;
  return s;
}

void throw_status(cudnnStatus_t status, const char* call, const char* file, int line, const std::string& subject) {
  std::string text = status_text(status);
  std::string what = subject.empty() ? std::string(call) : std::string(call) + " [" + subject + "]";
  ::ptxbench::detail::throw_call_error("cuDNN", static_cast<long>(status), text.c_str(), what.c_str(), file, line);
}

int64_t runtime_version_number() { return static_cast<int64_t>(cudnnGetVersion()); }

std::string runtime_version() {
  int64_t v = runtime_version_number();
  return std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." + std::to_string(v % 100);
}

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string(v) != "0";
}

bool debug_enabled() {
  static const bool on = env_flag("PTXBENCH_CUDNN_DEBUG");
  return on;
}

// ---- Descriptor -----------------------------------------------------------------------------

Descriptor::Descriptor(cudnnBackendDescriptorType_t type, std::string subject) : m_subject(std::move(subject)) {
  cudnnStatus_t st = cudnnBackendCreateDescriptor(type, &m_desc);
  if (st != CUDNN_STATUS_SUCCESS) {
    m_desc = nullptr;
    throw_status(st, "cudnnBackendCreateDescriptor", __FILE__, __LINE__, m_subject);
  }
}

Descriptor::~Descriptor() {
  if (m_desc) cudnnBackendDestroyDescriptor(m_desc);
}

Descriptor::Descriptor(Descriptor&& o) noexcept : m_desc(o.m_desc), m_subject(std::move(o.m_subject)) {
  o.m_desc = nullptr;
}

Descriptor& Descriptor::operator=(Descriptor&& o) noexcept {
  if (this != &o) {
    if (m_desc) cudnnBackendDestroyDescriptor(m_desc);
    m_desc = o.m_desc;
    m_subject = std::move(o.m_subject);
    o.m_desc = nullptr;
  }
  return *this;
}

void Descriptor::set(cudnnBackendAttributeName_t attr, cudnnBackendAttributeType_t type, int64_t count,
                     const void* values, const char* attr_text) {
  cudnnStatus_t st = cudnnBackendSetAttribute(m_desc, attr, type, count, values);
  if (st != CUDNN_STATUS_SUCCESS)
    throw_status(st, (std::string("cudnnBackendSetAttribute(") + attr_text + ")").c_str(), __FILE__, __LINE__,
                 m_subject);
}

cudnnStatus_t Descriptor::try_set(cudnnBackendAttributeName_t attr, cudnnBackendAttributeType_t type, int64_t count,
                                  const void* values) noexcept {
  return cudnnBackendSetAttribute(m_desc, attr, type, count, values);
}

void Descriptor::finalize() {
  cudnnStatus_t st = cudnnBackendFinalize(m_desc);
  if (st != CUDNN_STATUS_SUCCESS) throw_status(st, "cudnnBackendFinalize", __FILE__, __LINE__, m_subject);
}

cudnnStatus_t Descriptor::try_finalize() noexcept { return cudnnBackendFinalize(m_desc); }

Descriptor device_properties_from_json(const std::string& json) {
  Descriptor d(CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR, "device properties from JSON");
  PTXB_CUDNN_SET(d, CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, static_cast<int64_t>(json.size()),
                 json.data());
  d.finalize();
  return d;
}

// ---- Handle ---------------------------------------------------------------------------------

Handle::Handle() { PTXB_CUDNN_CALL(cudnnCreate(&m_handle)); }

Handle::~Handle() {
  if (m_handle) cudnnDestroy(m_handle);
}

// ---- GraphBuilder ---------------------------------------------------------------------------

GraphBuilder::GraphBuilder(std::string label) : m_label(std::move(label)) {}

int64_t GraphBuilder::tensor(const std::string& name, cudnnDataType_t dtype, std::vector<int64_t> dims,
                             std::vector<int64_t> strides, bool is_virtual, int64_t uid, int64_t ragged_offset) {
  if (uid < 0) {
    while (m_index.count(m_next_uid)) ++m_next_uid;
    uid = m_next_uid++;
  }
  PTXB_ENSURE(!m_index.count(uid), "cuDNN", m_label + ": tensor '" + name + "' reuses uid " + std::to_string(uid));
  PTXB_ENSURE(dims.size() == strides.size() && !dims.empty(), "cuDNN",
              m_label + ": tensor '" + name + "' has dims " + list_text(dims) + " but strides " + list_text(strides));
  PTXB_ENSURE(ragged_offset < 0 || m_index.count(ragged_offset), "cuDNN",
              m_label + ": tensor '" + name + "' refers to unknown ragged offset uid " + std::to_string(ragged_offset));
  return add_tensor(
      TensorInfo{name, uid, dtype, std::move(dims), std::move(strides), is_virtual, false, ragged_offset});
}

int64_t GraphBuilder::scalar(const std::string& name, float value, int64_t uid, int rank) {
  PTXB_ENSURE(uid >= 0 && !m_index.count(uid), "cuDNN",
              m_label + ": scalar '" + name + "' needs a fresh fixed uid, got " + std::to_string(uid));
  std::vector<int64_t> ones(static_cast<std::size_t>(rank), 1);
  add_tensor(TensorInfo{name, uid, CUDNN_DATA_FLOAT, ones, ones, false, true});
  m_scalars[uid] = std::make_unique<float>(value);
  return uid;
}

int64_t GraphBuilder::add_tensor(TensorInfo info) {
  const int64_t uid = info.uid;
  Descriptor d(CUDNN_BACKEND_TENSOR_DESCRIPTOR, m_label + ": " + (info.by_value ? "scalar" : "tensor") + " '" +
                                                   info.name + "' (uid " + std::to_string(uid) + ")");
  const int64_t alignment = 16;
  const int64_t rank = static_cast<int64_t>(info.dims.size());
  const bool yes = true;
  PTXB_CUDNN_SET(d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &info.dtype);
  PTXB_CUDNN_SET(d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, rank, info.dims.data());
  PTXB_CUDNN_SET(d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, rank, info.strides.data());
  PTXB_CUDNN_SET(d, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
  PTXB_CUDNN_SET(d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment);
  if (info.is_virtual) PTXB_CUDNN_SET(d, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &yes);
  if (info.by_value) PTXB_CUDNN_SET(d, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &yes);
  if (info.ragged_offset >= 0) {
    cudnnBackendDescriptor_t offsets = m_tensors[m_index.at(info.ragged_offset)].get();
    PTXB_CUDNN_SET(d, CUDNN_ATTR_TENSOR_RAGGED_OFFSET_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &offsets);
  }
  d.finalize();

  m_index[uid] = m_infos.size();
  m_infos.push_back(std::move(info));
  m_tensors.push_back(std::move(d));
  return uid;
}

const TensorInfo& GraphBuilder::info(int64_t uid) const {
  auto it = m_index.find(uid);
  PTXB_ENSURE(it != m_index.end(), "cuDNN", m_label + ": no tensor with uid " + std::to_string(uid));
  return m_infos[it->second];
}

cudnnBackendDescriptor_t GraphBuilder::tensor_desc(int64_t uid, const std::string& op) const {
  auto it = m_index.find(uid);
  PTXB_ENSURE(it != m_index.end(), "cuDNN",
              m_label + ": op '" + op + "' refers to unknown tensor uid " + std::to_string(uid));
  return m_tensors[it->second].get();
}

void GraphBuilder::add_op(Descriptor op, std::string line) {
  op.finalize();
  m_ops.push_back(std::move(op));
  m_op_lines.push_back(std::move(line));
}

void GraphBuilder::matmul(const std::string& name, int64_t a, int64_t b, int64_t c, cudnnDataType_t compute,
                          MatmulOverrides overrides) {
  Descriptor desc(CUDNN_BACKEND_MATMUL_DESCRIPTOR, m_label + ": matmul descriptor of '" + name + "'");
  PTXB_CUDNN_SET(desc, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute);
  desc.finalize();

  Descriptor op = operation(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, m_label, name, "matmul",
                            {PTXB_CUDNN_LINK(CUDNN_ATTR_OPERATION_MATMUL_ADESC, tensor_desc(a, name)),
                             PTXB_CUDNN_LINK(CUDNN_ATTR_OPERATION_MATMUL_BDESC, tensor_desc(b, name)),
                             PTXB_CUDNN_LINK(CUDNN_ATTR_OPERATION_MATMUL_CDESC, tensor_desc(c, name)),
                             PTXB_CUDNN_LINK(CUDNN_ATTR_OPERATION_MATMUL_DESC, desc.get())});
  std::string extents;
  for (auto [uid, attr, attr_text, letter] :
       {std::tuple{overrides.m, CUDNN_ATTR_OPERATION_MATMUL_GEMM_M_OVERRIDE_DESC, "GEMM_M_OVERRIDE_DESC", " m="},
        std::tuple{overrides.n, CUDNN_ATTR_OPERATION_MATMUL_GEMM_N_OVERRIDE_DESC, "GEMM_N_OVERRIDE_DESC", " n="},
        std::tuple{overrides.k, CUDNN_ATTR_OPERATION_MATMUL_GEMM_K_OVERRIDE_DESC, "GEMM_K_OVERRIDE_DESC", " k="}}) {
    if (uid < 0) continue;
    cudnnBackendDescriptor_t t = tensor_desc(uid, name);
    op.set(attr, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t, attr_text);
    extents += letter + info(uid).name;
  }
  m_sub_descs.push_back(std::move(desc));
  add_op(std::move(op), name + ": matmul(" + info(a).name + ", " + info(b).name + ") -> " + info(c).name +
                            " compute=" + dtype_text(compute) + extents);
}

void GraphBuilder::pointwise(const std::string& name, cudnnPointwiseMode_t mode, cudnnDataType_t compute, int64_t x,
                             int64_t y, int64_t b, int64_t t, std::optional<int64_t> axis) {
  Descriptor desc(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, m_label + ": pointwise descriptor of '" + name + "'");
  PTXB_CUDNN_SET(desc, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
  PTXB_CUDNN_SET(desc, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &compute);
  if (axis) {
    int64_t ax = *axis;
    PTXB_CUDNN_SET(desc, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &ax);
  }
  desc.finalize();

  Descriptor op = operation(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, m_label, name, "pointwise",
                            {PTXB_CUDNN_LINK(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, desc.get()),
                             PTXB_CUDNN_LINK(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, tensor_desc(x, name)),
                             PTXB_CUDNN_LINK(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, tensor_desc(y, name))});
  std::string args = info(x).name;
  if (b >= 0) {
    cudnnBackendDescriptor_t tb = tensor_desc(b, name);
    PTXB_CUDNN_SET(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &tb);
    args += ", " + info(b).name;
  }
  if (t >= 0) {
    cudnnBackendDescriptor_t tt = tensor_desc(t, name);
    PTXB_CUDNN_SET(op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &tt);
    args += ", " + info(t).name;
  }
  float one = 1.0f;
  PTXB_CUDNN_SET(op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, CUDNN_TYPE_FLOAT, 1, &one);
  PTXB_CUDNN_SET(op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, CUDNN_TYPE_FLOAT, 1, &one);
  m_sub_descs.push_back(std::move(desc));
  add_op(std::move(op), name + ": pointwise mode " + std::to_string(static_cast<int>(mode)) + "(" + args + ") -> " +
                            info(y).name + " compute=" + dtype_text(compute) +
                            (axis ? " axis=" + std::to_string(*axis) : std::string()));
}

void GraphBuilder::reduction(const std::string& name, cudnnReduceTensorOp_t reduce_op, int64_t x, int64_t y,
                             cudnnDataType_t compute) {
  Descriptor desc(CUDNN_BACKEND_REDUCTION_DESCRIPTOR, m_label + ": reduction descriptor of '" + name + "'");
  PTXB_CUDNN_SET(desc, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute);
  PTXB_CUDNN_SET(desc, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &reduce_op);
  // cudnn-frontend states "not deterministic" explicitly from 9.11 on; older libraries lack the attribute.
  if (runtime_version_number() >= 91100) {
    bool deterministic = false;
    cudnnStatus_t st = desc.try_set(CUDNN_ATTR_REDUCTION_IS_DETERMINISTIC, CUDNN_TYPE_BOOLEAN, 1, &deterministic);
    if (st != CUDNN_STATUS_SUCCESS)
      debug_line(m_label + ": " + name + ": REDUCTION_IS_DETERMINISTIC refused (" + status_text(st) + "), ignored");
  }
  desc.finalize();

  Descriptor op = operation(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, m_label, name, "reduction",
                            {PTXB_CUDNN_LINK(CUDNN_ATTR_OPERATION_REDUCTION_DESC, desc.get()),
                             PTXB_CUDNN_LINK(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, tensor_desc(x, name)),
                             PTXB_CUDNN_LINK(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, tensor_desc(y, name))});
  m_sub_descs.push_back(std::move(desc));
  add_op(std::move(op), name + ": reduction op " + std::to_string(static_cast<int>(reduce_op)) + "(" + info(x).name +
                            ") -> " + info(y).name + " compute=" + dtype_text(compute));
}

void GraphBuilder::reshape(const std::string& name, int64_t x, int64_t y) {
  Descriptor op = operation(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR, m_label, name, "reshape",
                            {PTXB_CUDNN_LINK(CUDNN_ATTR_OPERATION_RESHAPE_XDESC, tensor_desc(x, name)),
                             PTXB_CUDNN_LINK(CUDNN_ATTR_OPERATION_RESHAPE_YDESC, tensor_desc(y, name))});
  add_op(std::move(op), name + ": reshape(" + info(x).name + ") -> " + info(y).name);
}

void GraphBuilder::paged_cache_load(const std::string& name, int64_t container, int64_t page_table, int64_t seq_len,
                                    int64_t y) {
  Descriptor op =
      operation(CUDNN_BACKEND_OPERATION_PAGED_CACHE_LOAD_DESCRIPTOR, m_label, name, "paged cache load",
                {PTXB_CUDNN_LINK(CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_CONTAINER_DESC, tensor_desc(container, name)),
                 PTXB_CUDNN_LINK(CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_PAGE_TABLE_DESC, tensor_desc(page_table, name)),
                 PTXB_CUDNN_LINK(CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_SEQUENCE_DESC, tensor_desc(seq_len, name)),
                 PTXB_CUDNN_LINK(CUDNN_ATTR_OPERATION_PAGED_CACHE_LOAD_YDESC, tensor_desc(y, name))});
  add_op(std::move(op), name + ": paged_cache_load(" + info(container).name + ", table " + info(page_table).name +
                            ", lengths " + info(seq_len).name + ") -> " + info(y).name);
}

void GraphBuilder::finalize(cudnnHandle_t handle) {
  Descriptor g(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, m_label + ": operation graph (" +
                                                            std::to_string(m_ops.size()) + " ops)");
  std::vector<cudnnBackendDescriptor_t> ops;
  for (const auto& op : m_ops) ops.push_back(op.get());
  PTXB_CUDNN_SET(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, static_cast<int64_t>(ops.size()),
                 ops.data());
  // Deprecated in cuDNN 9 but still accepted; cudnn-frontend sets it too. Without a handle the
  // graph is built for the device properties given to the heuristics (deviceless).
  if (handle) PTXB_CUDNN_SET(g, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
  g.finalize();
  m_graph = std::move(g);
}

std::vector<int64_t> GraphBuilder::io_uids() const {
  std::vector<int64_t> out;
  for (const auto& t : m_infos)
    if (!t.is_virtual) out.push_back(t.uid);
  return out;
}

const void* GraphBuilder::scalar_value(int64_t uid) const {
  auto it = m_scalars.find(uid);
  return it == m_scalars.end() ? nullptr : it->second.get();
}

std::string GraphBuilder::describe() const {
  std::ostringstream s;
  s << m_label << ": " << m_infos.size() << " tensors, " << m_ops.size() << " ops\n";
  for (const auto& t : m_infos) {
    s << "  tensor uid " << t.uid << " '" << t.name << "' " << dtype_text(t.dtype) << " dims " << list_text(t.dims)
      << " strides " << list_text(t.strides) << (t.is_virtual ? " virtual" : "");
    if (t.by_value) s << " by-value=" << *m_scalars.at(t.uid);
    if (t.ragged_offset >= 0) s << " ragged by '" << info(t.ragged_offset).name << "'";
    s << "\n";
  }
  for (const auto& line : m_op_lines) s << "  op " << line << "\n";
  return s.str();
}

// ---- ExecutionPlan --------------------------------------------------------------------------

std::string PlanChoice::describe() const {
  std::ostringstream s;
  s << "eng" << engine;
  for (auto [k, v] : knobs) s << " k" << k << "=" << v;
  if (!notes.empty()) {
    s << " [";
    for (std::size_t i = 0; i < notes.size(); ++i) s << (i ? "," : "") << notes[i];
    s << "]";
  }
  s << " ws=" << workspace_bytes << " B (heur " << heur_mode << " #" << candidate << " of " << candidates << ")";
  return s.str();
}

ExecutionPlan ExecutionPlan::select(cudnnHandle_t handle, const GraphBuilder& graph, int64_t forced_engine,
                                    const Descriptor* device_props) {
  std::vector<std::string> tried;
  struct Mode {
    cudnnBackendHeurMode_t mode;
    const char* name;
  };
  for (Mode m : {Mode{CUDNN_HEUR_MODE_A, "A"}, Mode{CUDNN_HEUR_MODE_FALLBACK, "FALLBACK"}}) {
    Descriptor heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, graph.label() + ": heuristics mode " + m.name);
    cudnnBackendDescriptor_t g = graph.graph();
    PTXB_CUDNN_SET(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g);
    PTXB_CUDNN_SET(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &m.mode);
    if (device_props) {
      cudnnBackendDescriptor_t dp = device_props->get();
      PTXB_CUDNN_SET(heur, CUDNN_ATTR_ENGINEHEUR_DEVICEPROP, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &dp);
    }
    if (cudnnStatus_t st = heur.try_finalize(); st != CUDNN_STATUS_SUCCESS) {
      tried.push_back(std::string("heur ") + m.name + ": finalize failed: " + status_text(st));
      debug_line(graph.label() + ": " + tried.back());
      continue;
    }
    int64_t count = 0;
    cudnnStatus_t st = cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr);
    if (st != CUDNN_STATUS_SUCCESS || count <= 0) {
      tried.push_back(std::string("heur ") + m.name + ": " +
                      (st != CUDNN_STATUS_SUCCESS ? "result count failed: " + status_text(st) : "no engine configs"));
      debug_line(graph.label() + ": " + tried.back());
      continue;
    }
    std::vector<Descriptor> configs;
    std::vector<cudnnBackendDescriptor_t> raw;
    for (int64_t i = 0; i < count; ++i) {
      configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR,
                           graph.label() + ": engine config " + std::to_string(i) + " of heur " + m.name);
      raw.push_back(configs.back().get());
    }
    int64_t got = 0;
    st = cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count,
                                  &got, raw.data());
    if (st != CUDNN_STATUS_SUCCESS) {
      tried.push_back(std::string("heur ") + m.name + ": results failed: " + status_text(st));
      debug_line(graph.label() + ": " + tried.back());
      continue;
    }
    debug_line(graph.label() + ": heur " + m.name + " gave " + std::to_string(got) + " engine configs");
    for (int64_t i = 0; i < got && i < count; ++i) {
      PlanChoice choice = inspect_engine_config(raw[i]);
      choice.heur_mode = m.name;
      choice.candidate = static_cast<int>(i);
      choice.candidates = static_cast<int>(got);
      std::string tag = std::string("heur ") + m.name + " #" + std::to_string(i) + " eng" + std::to_string(choice.engine);
      if (forced_engine >= 0 && choice.engine != forced_engine) {
        tried.push_back(tag + ": skipped (PTXBENCH_CUDNN_ENGINE=" + std::to_string(forced_engine) + ")");
        debug_line(graph.label() + ": " + tried.back());
        continue;
      }
      Descriptor plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, graph.label() + ": plan from " + tag);
      PTXB_CUDNN_SET(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw[i]);
      // Required before cuDNN 9, deprecated since; cudnn-frontend set it up to 1.12. Harmless either way.
      if (cudnnStatus_t hs = handle ? plan.try_set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle)
                                    : CUDNN_STATUS_SUCCESS;
          hs != CUDNN_STATUS_SUCCESS)
        debug_line(graph.label() + ": " + tag + ": EXECUTION_PLAN_HANDLE refused (" + status_text(hs) + "), ignored");
      if (cudnnStatus_t fs = plan.try_finalize(); fs != CUDNN_STATUS_SUCCESS) {
        tried.push_back(tag + " (" + choice.describe() + "): plan finalize failed: " + status_text(fs));
        debug_line(graph.label() + ": " + tried.back());
        continue;
      }
      int64_t n = 0;
      PTXB_CUDNN_CALL(cudnnBackendGetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64,
                                               1, &n, &choice.workspace_bytes));
      ExecutionPlan out;
      out.m_config = std::move(configs[static_cast<std::size_t>(i)]);
      out.m_plan = std::move(plan);
      out.m_choice = std::move(choice);
      debug_line(graph.label() + ": chose " + out.m_choice.describe());
      return out;
    }
  }
  std::string msg = graph.label() + ": no engine config gave a plan (cuDNN " + runtime_version() + ")";
  for (const auto& t : tried) msg += "\n  " + t;
  msg += "\n" + graph.describe();
  throw Error("cuDNN", msg);
}

std::string ExecutionPlan::json() const {
  int64_t size = 0;
  if (cudnnBackendGetAttribute(m_plan.get(), CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, 0, &size,
                               nullptr) != CUDNN_STATUS_SUCCESS ||
      size <= 0)
    return "";
  std::string buf(static_cast<std::size_t>(size), '\0');
  if (cudnnBackendGetAttribute(m_plan.get(), CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, size,
                               &size, buf.data()) != CUDNN_STATUS_SUCCESS)
    return "";
  while (!buf.empty() && buf.back() == '\0') buf.pop_back();
  return buf;
}

PlanProbe probe_first_config(const GraphBuilder& graph, const Descriptor& device_props) {
  PlanProbe out;
  Descriptor heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, graph.label() + ": heuristics mode A (probe)");
  cudnnBackendDescriptor_t g = graph.graph(), dp = device_props.get();
  cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
  PTXB_CUDNN_SET(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g);
  PTXB_CUDNN_SET(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
  PTXB_CUDNN_SET(heur, CUDNN_ATTR_ENGINEHEUR_DEVICEPROP, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &dp);
  if ((out.status = heur.try_finalize()) != CUDNN_STATUS_SUCCESS) {
    out.detail = "heuristics finalize: " + status_text(out.status);
    return out;
  }
  Descriptor config(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, graph.label() + ": engine config (probe)");
  cudnnBackendDescriptor_t raw = config.get();
  int64_t got = 0;
  out.status = cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                        &got, &raw);
  if (out.status != CUDNN_STATUS_SUCCESS || got < 1) {
    out.detail = out.status != CUDNN_STATUS_SUCCESS ? "heuristics results: " + status_text(out.status)
                                                    : "heuristics gave no engine config (cuDNN's log says why)";
    if (out.status == CUDNN_STATUS_SUCCESS) out.status = CUDNN_STATUS_NOT_SUPPORTED;
    return out;
  }
  out.choice = inspect_engine_config(raw);
  out.choice.heur_mode = "A";
  out.choice.candidate = 0;
  out.choice.candidates = static_cast<int>(got);
  Descriptor plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, graph.label() + ": plan (probe)");
  PTXB_CUDNN_SET(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw);
  out.status = plan.try_finalize();
  out.detail = out.status == CUDNN_STATUS_SUCCESS ? "plan finalized" : "plan finalize: " + status_text(out.status);
  return out;
}

// ---- PlanRunner -----------------------------------------------------------------------------

int PlanRunner::run_on_stream(cudnnHandle_t handle, cudaStream_t stream, const ExecutionPlan& plan,
                              const std::vector<int64_t>& uids, const std::vector<void*>& pointers, void* workspace,
                              const std::string& label) noexcept {
  if (cudnnStatus_t st = cudnnSetStream(handle, stream); st != CUDNN_STATUS_SUCCESS) {
    std::fprintf(stderr, "ptxbench: %s: cudnnSetStream failed: %s\n", label.c_str(), status_text(st).c_str());
    return static_cast<int>(cudaErrorUnknown);
  }
  if (run(handle, plan, uids, pointers, workspace) != CUDNN_STATUS_SUCCESS) {
    std::fprintf(stderr, "ptxbench: %s: %s\n", label.c_str(), m_last_error.c_str());
    return static_cast<int>(cudaErrorUnknown);
  }
  return 0;
}

cudnnStatus_t PlanRunner::run(cudnnHandle_t handle, const ExecutionPlan& plan, const std::vector<int64_t>& uids,
                              const std::vector<void*>& pointers, void* workspace) noexcept {
  if (uids.size() != pointers.size()) {
    m_last_error = "variant pack: " + std::to_string(uids.size()) + " uids but " + std::to_string(pointers.size()) +
                   " pointers";
    return CUDNN_STATUS_BAD_PARAM;
  }
  if (!m_pack.get() || pointers != m_pointers || workspace != m_workspace) {
    try {
      Descriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, "variant pack");
      const int64_t n = static_cast<int64_t>(uids.size());
      PTXB_CUDNN_SET(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
      PTXB_CUDNN_SET(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, n, pointers.data());
      PTXB_CUDNN_SET(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n, uids.data());
      pack.finalize();
      m_pack = std::move(pack);
      m_pointers = pointers;
      m_workspace = workspace;
    } catch (const LibraryCallError& e) {
      m_pack = Descriptor();
      m_last_error = e.what();
      return static_cast<cudnnStatus_t>(e.code());
    } catch (const std::exception& e) {
      m_pack = Descriptor();
      m_last_error = e.what();
      return CUDNN_STATUS_INTERNAL_ERROR;
    }
  }
  cudnnStatus_t st = cudnnBackendExecute(handle, plan.get(), m_pack.get());
  if (st != CUDNN_STATUS_SUCCESS) m_last_error = "cudnnBackendExecute: " + status_text(st);
  return st;
}

}  // namespace ptxbench::cudnn
