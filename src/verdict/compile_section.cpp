#include "verdict/compile_section.h"

#include "common/enum_names.h"
#include "common/text.h"

namespace ptxbench {

CompileStatus parse_compile_status(std::string_view text) {
  constexpr CompileStatus kAll[] = {CompileStatus::ok, CompileStatus::compile_error, CompileStatus::banned_api,
                                    CompileStatus::abi_error, CompileStatus::timeout};
  std::vector<std::string> names;
  for (CompileStatus s : kAll) {
    names.push_back(to_string(s));
    if (text == names.back()) return s;
  }
  std::vector<const char*> list;
  for (const auto& n : names) list.push_back(n.c_str());
  detail::throw_unknown_name("compile status", text, list);
}

CompileSection compile_section(const CompileResult& r) {
  CompileSection s;
  s.status = r.status;
  s.message = r.message;
  s.binding = r.binding;
  CompileBuild& b = s.build.emplace();
  b.arch = r.arch;
  b.key = r.key;
  b.cache_hit = r.cache_hit;
  b.seconds = r.seconds;
  b.kernels = r.kernels;
  b.ptx = {r.ptx.instructions, {r.ptx.families.begin(), r.ptx.families.end()}};
  for (const auto& k : r.ptxas.kernels)
    b.ptxas.kernels.push_back({k.name, k.registers, k.barriers, k.smem_bytes, k.stack_frame_bytes,
                               k.spill_store_bytes, k.spill_load_bytes});
  b.ptxas.warnings = r.ptxas.warnings;
  for (const auto& f : r.source_findings) b.banned.push_back({f.rule, f.line, f.excerpt, std::nullopt, f.reason});
  for (const auto& f : r.binary.banned) b.banned.push_back({f.rule, std::nullopt, "", f.symbol, f.reason});
  b.log = cut(r.log, kCompileLogLimit, "\n[... truncated ...]");
  return s;
}

void to_json(ordered_json& j, const PtxCounts& p) {
  j = {{"instructions", p.instructions}, {"families", p.families}};
}

void from_json(const ordered_json& j, PtxCounts& p) {
  require_json_object(j);
  read_field(j, "instructions", p.instructions);
  read_field(j, "families", p.families);
}

void to_json(ordered_json& j, const PtxasKernel& k) {
  j = {{"name", k.name},
       {"registers", k.registers},
       {"barriers", k.barriers},
       {"smem_bytes", k.smem_bytes},
       {"stack_frame_bytes", k.stack_frame_bytes},
       {"spill_store_bytes", k.spill_store_bytes},
       {"spill_load_bytes", k.spill_load_bytes}};
}

void from_json(const ordered_json& j, PtxasKernel& k) {
  require_json_object(j);
  read_field(j, "name", k.name);
  read_field(j, "registers", k.registers);
  read_field(j, "barriers", k.barriers);
  read_field(j, "smem_bytes", k.smem_bytes);
  read_field(j, "stack_frame_bytes", k.stack_frame_bytes);
  read_field(j, "spill_store_bytes", k.spill_store_bytes);
  read_field(j, "spill_load_bytes", k.spill_load_bytes);
}

void to_json(ordered_json& j, const PtxasSummary& s) { j = {{"kernels", s.kernels}, {"warnings", s.warnings}}; }

void from_json(const ordered_json& j, PtxasSummary& s) {
  require_json_object(j);
  read_field(j, "kernels", s.kernels);
  read_field(j, "warnings", s.warnings);
}

void to_json(ordered_json& j, const BannedUse& b) {
  j = {{"rule", b.rule}};
  if (b.line) {
    j["line"] = *b.line;
    j["text"] = b.text;
  }
  write_optional(j, "symbol", b.symbol);
  j["reason"] = b.reason;
}

void from_json(const ordered_json& j, BannedUse& b) {
  require_json_object(j);
  read_field(j, "rule", b.rule);
  read_field(j, "line", b.line);
  read_field(j, "text", b.text);
  read_field(j, "symbol", b.symbol);
  read_field(j, "reason", b.reason);
}

void to_json(ordered_json& j, const CompileSection& s) {
  j = {{"status", to_string(s.status)}, {"message", s.message}};
  if (s.binding) j["binding"] = to_string(*s.binding);
  if (const auto& b = s.build) {
    j["arch"] = b->arch;
    j["key"] = b->key;
    j["cache_hit"] = b->cache_hit;
    j["seconds"] = b->seconds;
    j["kernels"] = b->kernels;
    j["ptx"] = b->ptx;
    j["ptxas"] = b->ptxas;
    j["banned"] = b->banned;
    j["log"] = b->log;
  }
  write_stage_record(j, s);
}

void from_json(const ordered_json& j, CompileSection& s) {
  require_json_object(j);
  read_enum(j, "status", s.status, parse_compile_status);
  read_field(j, "message", s.message);
  s.binding.reset();
  if (j.contains("binding") && !j["binding"].is_null()) {
    CandidateBinding binding = CandidateBinding::ptxb;
    read_enum(j, "binding", binding, parse_candidate_binding);
    s.binding = binding;
  }
  s.build.reset();
  for (const char* key : {"arch", "key", "cache_hit", "seconds", "kernels", "ptx", "ptxas", "banned", "log"})
    if (j.contains(key)) s.build.emplace();
  if (auto& b = s.build) {
    read_field(j, "arch", b->arch);
    read_field(j, "key", b->key);
    read_field(j, "cache_hit", b->cache_hit);
    read_field(j, "seconds", b->seconds);
    read_field(j, "kernels", b->kernels);
    read_field(j, "ptx", b->ptx);
    read_field(j, "ptxas", b->ptxas);
    read_field(j, "banned", b->banned);
    read_field(j, "log", b->log);
  }
  read_stage_record(j, s);
}

}  // namespace ptxbench
