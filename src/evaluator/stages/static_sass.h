// The static-SASS stage: the candidate's cubins disassembled (cuobjdump), their opcodes counted per
// kernel, their instructions listed by offset (the CUPTI counting path maps run-time counts to
// them) and their MMA shapes read (tensor-core coverage).
#pragma once

#include <vector>

#include "evaluator/evaluation.h"

namespace ptxbench {

/// Its section, and what later stages read of it (into CandidateBuild).
struct StaticSassOutcome : StageOutcome<StaticSassSection> {
  PcOpcodes listing;
  std::map<std::string, std::vector<MmaShape>> mma_shapes;
  std::optional<bool> mechanism_opcodes;  ///< unset: no listing (cuobjdump missing or failed)

  /// Hands the listing, shapes and mechanism flag to `build`.
  void into(CandidateBuild& build);
};

/// One cubin (a CUDA candidate) or several (a Triton one has one per kernel and specialization).
StaticSassOutcome static_sass(const std::vector<fs::path>& cubins);

}  // namespace ptxbench
