// The two kinds of fine-tuning records as chat JSONL (docs/design.md §9, issue 19; docs/adaptation.md,
// "Records and the loss mask"):
//   fixit:     system, task, the wrong kernel (assistant), its feedback (user) → reasoning + fixed kernel
//   kernelgen: system, task → (reasoning +) correct kernel
// One JSON object per line, read as it is by TRL's SFTTrainer and by LLaMA-Factory:
//   {"messages": [...], "prompt": [...], "completion": [...], "meta": {...}}
// The loss mask convention (kLossMaskConvention): the loss falls on the LAST assistant message only.
// `prompt` is every message before it and `completion` is [it] (TRL's conversational
// prompt-completion type: with completion_only_loss, its default, only the completion is trained);
// `messages` is the whole chat (LLaMA-Factory's sharegpt format with OpenAI-style tags and
// `mask_history: true`, which trains the last turn only). `meta` names where the record came from.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "adapt/repair_pairs.h"
#include "adapt/turn_selection.h"
#include "common/json_check.h"

namespace ptxbench {

inline constexpr const char* kLossMaskConvention =
    "The loss falls on the last assistant message only. 'completion' holds that message and 'prompt' every "
    "message before it (TRL: conversational prompt-completion, completion_only_loss=true); 'messages' is "
    "prompt + completion (LLaMA-Factory: sharegpt formatting with role/content tags and mask_history: true). "
    "Earlier assistant messages (the wrong kernel of a fixit record) are context, never trained on.";

enum class RecordKind { fixit, kernelgen };
std::string to_string(RecordKind kind);
RecordKind parse_record_kind(std::string_view text);

struct ChatTurn {
  std::string role;  ///< system, user, assistant
  std::string content;
  bool operator==(const ChatTurn&) const = default;
};

/// Where a record came from, and what it holds.
struct RecordMeta {
  RecordKind kind = RecordKind::fixit;
  std::string id;        ///< fixit: the pair hash; kernelgen: the kernel hash (unique in a dataset)
  std::string run_id;
  int64_t trajectory_id = 0;
  TrajectoryKey key;     ///< definition, workload, prompt tag, index
  int64_t turn = 0;      ///< the turn of the kernel trained on (the fixed one / the correct one)
  std::optional<int64_t> wrong_turn;           ///< fixit: in the wrong kernel's run (a seed's source turn)
  /// fixit: where the wrong kernel was written: this trajectory ("within_trajectory"), another
  /// run's turn repaired here ("cross_run"), or a repair seed naming no source ("seed").
  std::string pair;
  std::optional<std::string> wrong_run;        ///< fixit: the wrong kernel's run
  std::optional<int64_t> wrong_trajectory;     ///< fixit: its trajectory (a store id), when known
  std::string label;                           ///< label key: the wrong turn's (fixit), "correct" (kernelgen)
  std::optional<std::string> wrong_status;     ///< fixit
  std::optional<std::string> wrong_sha256;     ///< fixit, unset for an extraction error
  std::string status;                          ///< the trained kernel's verdict status (PASSED)
  std::string sha256;                          ///< the trained kernel's candidate hash
  std::optional<double> speedup;               ///< the trained kernel's speedup
  std::string teacher_model;                   ///< "" without reasoning
  int reasoning_attempts = 0;                  ///< teacher calls it took (0 without reasoning)
  [[nodiscard]] ordered_json to_json() const;
};

struct SftRecord {
  std::vector<ChatTurn> messages;
  RecordMeta meta;

  /// {"messages", "prompt", "completion", "meta"}; the completion is the last message, which is
  /// an assistant message.
  [[nodiscard]] ordered_json to_json() const;
  /// to_json() on one line (UTF-8, invalid bytes replaced) and a newline.
  [[nodiscard]] std::string jsonl_line() const;
  [[nodiscard]] const std::string& definition() const noexcept { return meta.key.definition; }
};

/// The teacher's part of a record: nullopt, or an accepted reasoning and who wrote it.
struct RecordReasoning {
  std::string text;
  std::string teacher_model;
  int attempts = 0;
};

/// The trained message: "<think>\n" + reasoning + "\n</think>\n\n" and the kernel in a ```cuda
/// block; without reasoning, the block alone.
std::string final_answer(const std::optional<RecordReasoning>& reasoning, const std::string& kernel_source);

/// The fixit record of a pair: system, task, the wrong kernel in a ```cuda block (an extraction
/// error's answer as it was), its feedback, then final_answer(reasoning, fixed kernel). Throws
/// HeldOutViolation when the pair's definition is held out.
SftRecord fixit_record(const RepairPair& pair, const std::optional<RecordReasoning>& reasoning,
                       const HeldOutDefinitions& held_out);

/// The kernelgen record: system, task, final_answer(reasoning, kernel). Throws HeldOutViolation
/// when the kernel's definition is held out.
SftRecord kernelgen_record(const CorrectKernel& kernel, const std::optional<RecordReasoning>& reasoning,
                           const HeldOutDefinitions& held_out);

}  // namespace ptxbench
