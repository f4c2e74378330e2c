// The verdict's SASS sections: static_sass (the cubin's opcodes: what the code could do) and
// runtime_sass (predicate-true executed opcodes of the candidate's kernels: what ran, which
// decides the mechanisms of paper Table 6).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sass/opcode_counts.h"
#include "sass/runtime_sass.h"
#include "sass/sass_listing.h"
#include "verdict/integrity_section.h"
#include "verdict/stage_record.h"

namespace ptxbench {

/// Instructions of the mechanism families (family_count in sass/opcode_counts.h).
struct FamilyCounts {
  long long gmma = 0;
  long long tma = 0;
  long long tcgen05 = 0;
};

FamilyCounts family_counts(const OpcodeCounts& c);

struct StaticSassSection : StageRecord<StaticSassSection> {
  bool available = false;  ///< false when cuobjdump is missing or failed (see note)
  std::string note;
  // The rest only when available:
  FamilyCounts counts;
  Mechanisms mechanisms;
  OpcodeCounts opcodes;
};
void json_fields(JsonIo& io, StaticSassSection& s);

struct RuntimeSassSection : StageRecord<RuntimeSassSection> {
  /// Unset only in a section that holds nothing but a shared-GPU time-out record (the stage timed
  /// out twice before it measured anything); readers take that as false.
  std::optional<bool> available;
  std::string note;
  // The rest only when available:
  std::string source;  ///< the tool and metric the counts come from
  int kernels_profiled = 0;
  FamilyCounts counts;  ///< of the predicate-true thread counts
  Mechanisms mechanisms;
  OpcodeCounts thread_true_opcodes;
  OpcodeCounts warp_executed_opcodes;
  std::vector<std::string> foreign_kernels;  ///< launched kernels not in the candidate's cubin
  /// The profiled call's launches of the candidate's kernels; the timed calls must repeat them.
  std::vector<std::string> launches;
  std::optional<CoverageRecord> coverage;  ///< tensor-core FLOP share (schema 2)

  [[nodiscard]] bool measured() const { return available.value_or(false); }
};
void json_fields(JsonIo& io, RuntimeSassSection& s);

StaticSassSection static_sass_section(const StaticSass& s);
RuntimeSassSection runtime_sass_section(const RuntimeSass& r);

}  // namespace ptxbench
