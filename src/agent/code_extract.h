// Extracting the candidate from a model's answer (docs/design.md §6): the last valid fenced code block.
// Valid: closed, in the run's language (CUDA: a C/C++/CUDA tag; Triton: python/py; or none named),
// not empty, and defining the entry point (CUDA: `ptxb_run`; Triton: a top-level `def run(`) — so a
// trailing snippet quoted for discussion or a truncated final block does not replace the kernel.
#pragma once

#include <optional>
#include <string>

#include "compile/triton_check.h"

namespace ptxbench {

struct Extraction {
  std::optional<std::string> source;  ///< the candidate, when one was found
  std::string error;                  ///< why none was found: shown to the model as the turn's feedback
  int blocks_seen = 0;                ///< fenced blocks of any kind in the answer
};

Extraction extract_candidate(const std::string& answer, CandidateLanguage language = CandidateLanguage::cuda);

}  // namespace ptxbench
