// The teacher of fine-tuning data (docs/design.md §9, issue 19): for a wrong→fixed pair, the first-person
// reasoning that leads from the wrong kernel and its feedback to the fix (for a correct kernel, from
// the task to the kernel), asked of a model through the provider-neutral clients. Answers outside
// the length limits, without their <reasoning> block, with reserved tags, or copying the target
// kernel are rejected and asked again with a stricter instruction, up to `attempts` calls; every
// outcome is cached by request key in the dataset folder, so a rebuild calls no one
// (docs/adaptation.md, "Reasoning"). The loop and the cache are teacher_call.h's, shared with the
// repair notes (note_synthesis.h).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "adapt/repair_pairs.h"
#include "adapt/teacher_call.h"
#include "llm/model_client.h"
#include "common/fs.h"

namespace ptxbench {

inline constexpr const char* kReasoningCacheSchema = "ptxbench.reasoning";
/// Part of every cache key: a change of the prompt text below must change it.
inline constexpr int kReasoningPromptVersion = 1;

/// What the prompt embeds at most of each text (bytes; the start is kept, then a cut marker).
inline constexpr std::size_t kReasoningTaskMaxChars = 40000;
inline constexpr std::size_t kReasoningKernelMaxChars = 60000;    ///< each kernel
inline constexpr std::size_t kReasoningFeedbackMaxChars = 12000;

/// Copy detection, on lines trimmed of blanks, ignoring those shorter than kLeakMinLineChars
/// (braces, "#pragma unroll"-sized noise stays in): a reasoning copies the target kernel when it
/// holds min(kLeakRunLines, the kernel's line count) of its lines consecutively, or when
/// kLeakLineShare of the kernel's distinct lines appear in it anywhere.
inline constexpr std::size_t kLeakMinLineChars = 8;
inline constexpr std::size_t kLeakRunLines = 20;
inline constexpr double kLeakLineShare = 0.8;

/// Limits on an accepted reasoning (Unicode code points) and the teacher calls per request. The
/// defaults: the paper's minimum of 200 characters; a maximum of 100000 (~25k tokens), so that
/// the reasoning, the kernel and the prompt fit a 64k-token training context.
struct ReasoningLimits {
  std::size_t min_chars = 200;
  std::size_t max_chars = 100000;
  int attempts = 3;     ///< teacher calls per request, the first included
  int concurrency = 4;  ///< requests in flight while building a dataset
  [[nodiscard]] ordered_json to_json() const;
};

enum class ReasoningKind { repair, generation };

/// What the teacher is shown. repair: task, wrong kernel, its status and feedback, the fix;
/// generation: task and the correct kernel.
struct ReasoningRequest {
  ReasoningKind kind = ReasoningKind::repair;
  std::string task;
  std::string wrong_kernel;  ///< the wrong candidate's source, or its answer for an extraction error
  std::string wrong_status;
  std::string feedback;
  std::string target_kernel;  ///< the kernel the reasoning must lead to (and must not copy)

  /// SHA-256 over the prompt version, the kind, the teacher model and every text above: the
  /// cache entry's name. Limits are not part of it: a cached answer is checked again against the
  /// limits in force.
  [[nodiscard]] std::string key(const std::string& teacher_model) const;
};

ReasoningRequest reasoning_request(const RepairPair& pair);
ReasoningRequest reasoning_request(const CorrectKernel& kernel);

struct ReasoningPrompt {
  std::string system;
  std::string user;
};

/// The teacher's messages. With earlier rejections, the user message ends with a section naming
/// the last one and restating the rules strictly.
ReasoningPrompt reasoning_prompt(const ReasoningRequest& request, const ReasoningLimits& limits,
                                 const std::vector<std::string>& rejections = {});

/// The text between the answer's first "<reasoning>" and the last "</reasoning>" after it, trimmed;
/// nullopt when there is no such closed block.
std::optional<std::string> extract_reasoning(const std::string& answer);

/// The longest run of consecutive (filtered) lines of `kernel` found consecutively in `text`.
std::size_t longest_copied_run(const std::string& text, const std::string& kernel);

/// Why `reasoning` is refused ("too short: 120 characters, the minimum is 200"), nullopt when it
/// is accepted: its length, a reserved tag (<think>, </think>, <reasoning>, </reasoning>), a
/// phrase that refers to the target kernel as shown ("kernel above", "expert's kernel", ...), or a
/// copy of the target kernel.
std::optional<std::string> reasoning_rejection(const std::string& reasoning, const std::string& target_kernel,
                                               const ReasoningLimits& limits);

struct SynthesisResult {
  bool accepted = false;
  std::string reasoning;                ///< the accepted text ("" when rejected every time)
  int attempts = 0;                     ///< teacher calls it took (for a cached result: as recorded)
  std::vector<std::string> rejections;  ///< why each refused answer was refused, in order
  bool from_cache = false;
  std::string teacher_model;
};

/// Thread-safe: requests may be synthesized concurrently (the client is; cache entries are
/// separate files written atomically).
class ReasoningSynthesizer {
 public:
  /// `cache_dir` is created when absent.
  ReasoningSynthesizer(ModelClient& client, std::string teacher_model, ReasoningLimits limits, fs::path cache_dir);

  /// The cached result when its entry is still valid (accepted and within the limits, or rejected
  /// after at least `attempts` calls); otherwise up to `attempts` teacher calls, stored in the
  /// cache whatever the outcome. A call that fails for good (ModelApiError) propagates and caches
  /// nothing.
  SynthesisResult synthesize(const ReasoningRequest& request);

  [[nodiscard]] int64_t calls() const noexcept { return m_calls.load(); }  ///< teacher calls made
  [[nodiscard]] fs::path cache_path(const ReasoningRequest& request) const;

 private:
  std::optional<SynthesisResult> cached(const ReasoningRequest& request) const;

  ModelClient& m_client;
  std::string m_model;
  ReasoningLimits m_limits;
  TeacherCache m_cache;
  std::atomic<int64_t> m_calls{0};
};

}  // namespace ptxbench
