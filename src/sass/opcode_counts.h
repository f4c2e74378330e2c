// Per-opcode SASS counts (static from the disassembly, or executed at run time) and the
// mechanisms they prove (paper Table 6): C_Gen4 wgmma, D_TMA bulk tensor copies, C_Gen5 tcgen05
// MMA + TMEM loads, D_TMEM tcgen05 copies/stores.
#pragma once

#include <map>
#include <string>

#include "common/json_check.h"

namespace ptxbench {

/// Base opcode (text before the first '.') -> count.
using OpcodeCounts = std::map<std::string, long long>;

struct Mechanisms {
  bool c_gen4 = false;  ///< *GMMA > 0 (wgmma.mma_async; HGMMA for bf16)
  bool d_tma = false;   ///< UTMALDG > 0 or UTMASTG > 0 (cp.async.bulk.tensor)
  bool c_gen5 = false;  ///< UTC*MMA > 0 and (LDTM > 0 or LDT > 0) (tcgen05.mma + tcgen05.ld)
  bool d_tmem = false;  ///< UTCCP > 0 or STTM > 0 or STT > 0 (tcgen05.cp / tcgen05.st)
};

Mechanisms mechanisms_from(const OpcodeCounts& counts);
/// Sum of the counts whose opcode satisfies the family: "GMMA" (ends with GMMA), "TMA"
/// (UTMALDG|UTMASTG|UTMAREDG), "TCGEN05" (UTC*, LDTM, STTM, LDT, STT).
long long family_count(const OpcodeCounts& counts, const std::string& family);
void add_counts(OpcodeCounts& into, const OpcodeCounts& from);
/// Whether any opcode of the mechanism families (GMMA, TMA, TCGEN05) is present. Run-time counts
/// are a subset of the cubin's instructions: a cubin without any cannot execute a mechanism.
bool has_mechanism_opcodes(const OpcodeCounts& counts);

ordered_json to_json(const Mechanisms& m);
/// The reverse of to_json(Mechanisms); an absent flag is false, a non-boolean one an error.
Mechanisms mechanisms_from_json(const ordered_json& j);
ordered_json to_json(const OpcodeCounts& c);

}  // namespace ptxbench
