#include "sass/opcode_counts.h"

#include "common/json_fields.h"

namespace ptxbench {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

long long count_of(const OpcodeCounts& c, const std::string& op) {
  auto it = c.find(op);
  return it == c.end() ? 0 : it->second;
}

bool in_family(const std::string& op, const std::string& family) {
  if (family == "GMMA") return ends_with(op, "GMMA") && !starts_with(op, "UTC");
  if (family == "TMA") return op == "UTMALDG" || op == "UTMASTG" || op == "UTMAREDG";
  if (family == "UTCMMA") return starts_with(op, "UTC") && ends_with(op, "MMA");
  if (family == "TCGEN05")
    return starts_with(op, "UTC") || op == "LDTM" || op == "STTM" || op == "LDT" || op == "STT";
  return op == family;
}

}  // namespace

long long family_count(const OpcodeCounts& counts, const std::string& family) {
  long long n = 0;
  for (const auto& [op, c] : counts)
    if (in_family(op, family)) n += c;
  return n;
}

Mechanisms mechanisms_from(const OpcodeCounts& c) {
  Mechanisms m;
  m.c_gen4 = family_count(c, "GMMA") > 0;
  m.d_tma = count_of(c, "UTMALDG") > 0 || count_of(c, "UTMASTG") > 0;
  m.c_gen5 = family_count(c, "UTCMMA") > 0 && (count_of(c, "LDTM") > 0 || count_of(c, "LDT") > 0);
  m.d_tmem = count_of(c, "UTCCP") > 0 || count_of(c, "STTM") > 0 || count_of(c, "STT") > 0;
  return m;
}

void add_counts(OpcodeCounts& into, const OpcodeCounts& from) {
  for (const auto& [op, n] : from) into[op] += n;
}

ordered_json to_json(const Mechanisms& m) {
  return {{"c_gen4", m.c_gen4}, {"d_tma", m.d_tma}, {"c_gen5", m.c_gen5}, {"d_tmem", m.d_tmem}};
}

Mechanisms mechanisms_from_json(const ordered_json& j) {
  require_json_object(j);
  Mechanisms m;
  read_field(j, "c_gen4", m.c_gen4);
  read_field(j, "d_tma", m.d_tma);
  read_field(j, "c_gen5", m.c_gen5);
  read_field(j, "d_tmem", m.d_tmem);
  return m;
}

ordered_json to_json(const OpcodeCounts& c) {
  ordered_json j = ordered_json::object();
  for (const auto& [op, n] : c) j[op] = n;
  return j;
}

bool has_mechanism_opcodes(const OpcodeCounts& counts) {
  return family_count(counts, "GMMA") + family_count(counts, "TMA") + family_count(counts, "TCGEN05") > 0;
}

}  // namespace ptxbench
