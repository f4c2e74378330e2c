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
  b.ptxas = r.ptxas;
  for (const auto& f : r.source_findings) b.banned.push_back({f.rule, f.line, f.excerpt, std::nullopt, f.reason});
  for (const auto& f : r.binary.banned) b.banned.push_back({f.rule, std::nullopt, "", f.symbol, f.reason});
  b.log = cut(r.log, kCompileLogLimit, "\n[... truncated ...]");
  return s;
}

void json_fields(JsonIo& io, PtxCounts& p) {
  io("instructions", p.instructions);
  io("families", p.families);
}

void json_fields(JsonIo& io, PtxasKernel& k) {
  io("name", k.name);
  io("registers", k.registers);
  io("barriers", k.barriers);
  io("smem_bytes", k.smem_bytes);
  io("stack_frame_bytes", k.stack_frame_bytes);
  io("spill_store_bytes", k.spill_store_bytes);
  io("spill_load_bytes", k.spill_load_bytes);
}

void json_fields(JsonIo& io, PtxasSummary& s) {
  io("kernels", s.kernels);
  io("warnings", s.warnings);
}

void json_fields(JsonIo& io, BannedUse& b) {
  io("rule", b.rule);
  io("line", b.line);
  io.when(b.line.has_value(), "text", b.text);
  io("symbol", b.symbol);
  io("reason", b.reason);
}

void json_fields(JsonIo& io, CompileBuild& b) {
  io("arch", b.arch);
  io("key", b.key);
  io("cache_hit", b.cache_hit);
  io("seconds", b.seconds);
  io("kernels", b.kernels);
  io("ptx", b.ptx);
  io("ptxas", b.ptxas);
  io("banned", b.banned);
  io("log", b.log);
}

void json_fields(JsonIo& io, CompileSection& s) {
  io.name("status", s.status, parse_compile_status);
  io("message", s.message);
  io.name("binding", s.binding, parse_candidate_binding);
  io.inline_part(s.build);
  stage_record_fields(io, s);
}

}  // namespace ptxbench
