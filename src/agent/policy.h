// Where a trajectory's answers come from (docs/design.md §6): a real model through a ModelClient, or one of
// the built-in policies that need no API key — `expert` (the bundled expert kernel of the
// definition, or a suite fixture that passes while no expert exists) and `replay` (the answers of
// a stored trajectory, turn by turn).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "llm/model_client.h"
#include "runs/run_store.h"
#include "common/fs.h"
#include "compile/triton_check.h"

namespace ptxbench {

struct PolicyAnswer {
  std::string text;
  std::string reasoning;
  ModelUsage usage;
};

/// What a policy sees for one turn: the system text and the conversation as the context policy
/// shaped it (user/assistant turns, the task first).
struct PolicyRequest {
  const TrajectoryKey* key = nullptr;
  int64_t turn = 0;
  std::string system;
  std::vector<StoredMessage> conversation;
};

class Policy {
 public:
  virtual ~Policy() = default;
  [[nodiscard]] virtual std::string name() const = 0;
  /// Throws ModelApiError when the model call failed for good; InputError when the policy has no
  /// answer for this request (replay beyond the stored turns, no expert for a definition).
  virtual PolicyAnswer answer(const PolicyRequest& request) = 0;
};

std::unique_ptr<Policy> make_model_policy(std::shared_ptr<ModelClient> client, const ModelConfig& config);

/// `root` is the data root (knowledge/, tests/fixtures/). Each answer is a short note and the
/// kernel in a ```cuda block (a Triton run: the file in a ```python block); usage counts nothing
/// (no model was called).
std::unique_ptr<Policy> make_expert_policy(const fs::path& root, CandidateLanguage language = CandidateLanguage::cuda);

/// The answers of the trajectory with the same key in `run_id` of the store at `store_path`.
std::unique_ptr<Policy> make_replay_policy(const std::string& store_path, const std::string& run_id);

/// The expert kernel for a definition: knowledge/<pack>/experts/<definition>.cu when one exists,
/// else the first case of a suite under tests/fixtures whose definition matches, whose language is
/// `language` and which is expected to pass (Triton: only such suite cases). Throws InputError
/// naming the definition when neither exists.
struct ExpertSource {
  std::string source;
  std::string origin;  ///< the file (or suite case) it came from
};
ExpertSource find_expert_source(const fs::path& root, const std::string& definition,
                                CandidateLanguage language = CandidateLanguage::cuda);

}  // namespace ptxbench
