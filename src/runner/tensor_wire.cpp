#include "runner/tensor_wire.h"

#include <cstdio>
#include <cstring>

#include "common/error.h"

namespace ptxbench {

ordered_json to_json(const TensorSpec& s) {
  return {{"name", s.name},
          {"dtype", dtype_name(s.dtype)},
          {"shape", s.shape},
          {"strides", s.strides},
          {"is_output", s.is_output}};
}

TensorSpec tensor_spec_from_json(const ordered_json& j) {
  TensorSpec s;
  s.name = j.at("name").get<std::string>();
  auto dt = parse_dtype(j.at("dtype").get<std::string>());
  PTXB_ENSURE(dt.has_value(), "runner", "bad dtype in tensor spec");
  s.dtype = *dt;
  s.shape = j.at("shape").get<std::vector<int64_t>>();
  s.strides = j.at("strides").get<std::vector<int64_t>>();
  s.is_output = j.at("is_output").get<bool>();
  PTXB_ENSURE(s.shape.size() == s.strides.size() && s.shape.size() <= 8, "runner", "bad tensor rank");
  return s;
}

ordered_json to_json(const WireTensor& t) {
  ordered_json j = to_json(t.spec);
  if (t.ipc) {
    std::string hex;
    char b[3];
    for (int i = 0; i < CUDA_IPC_HANDLE_SIZE; ++i) {
      std::snprintf(b, sizeof b, "%02x", static_cast<unsigned char>(t.ipc->reserved[i]));
      hex += b;
    }
    j["ipc"] = hex;
    j["offset"] = t.offset;
  }
  return j;
}

WireTensor wire_tensor_from_json(const ordered_json& j) {
  WireTensor t;
  t.spec = tensor_spec_from_json(j);
  if (j.contains("ipc")) {
    std::string hex = j["ipc"].get<std::string>();
    PTXB_ENSURE(hex.size() == 2 * CUDA_IPC_HANDLE_SIZE, "runner", "bad IPC handle");
    cudaIpcMemHandle_t h{};
    for (int i = 0; i < CUDA_IPC_HANDLE_SIZE; ++i)
      h.reserved[i] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
    t.ipc = h;
    t.offset = j.at("offset").get<std::size_t>();
  }
  return t;
}

std::vector<TensorSpec> tensor_specs_from_json(const ordered_json& list) {
  std::vector<TensorSpec> out;
  for (const auto& j : list) out.push_back(tensor_spec_from_json(j));
  return out;
}

}  // namespace ptxbench
