// A repair note: what a teacher model wrote about one wrong→fixed pair of kernels of a trajectory
// (what was wrong, the general rule, the fix, a short example, and optionally an instruction part:
// how one PTX instruction must be used), typed, with where it came from. Also the teacher's prompt
// and the strict reader of its answer (docs/design.md §9, issue 19 item 5, issue 36 item 4).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json_check.h"

namespace ptxbench {

inline constexpr const char* kRepairNoteSchema = "ptxbench.repair_note";

// Length limits of a note's fields, in Unicode code points (UTF-8 text). A teacher answer over
// any limit is refused rather than cut: a cut rule or example reads as a wrong one.
inline constexpr std::size_t kWhatWasWrongMaxChars = 600;
inline constexpr std::size_t kRuleMaxChars = 400;
inline constexpr std::size_t kFixMaxChars = 800;
inline constexpr std::size_t kExampleMaxChars = 1500;
// Limits of the optional instruction part. Its lists are capped in items and per item: a sequence
// longer than a handful of steps is a kernel, not a contract.
inline constexpr std::size_t kInstructionMaxChars = 120;
inline constexpr std::size_t kShapeContextMaxChars = 300;
inline constexpr std::size_t kOperandContractMaxChars = 600;
inline constexpr std::size_t kDiagnosticsMaxChars = 400;
inline constexpr std::size_t kRequiredSequenceMaxSteps = 8;
inline constexpr std::size_t kDoNotDoMaxItems = 6;
inline constexpr std::size_t kNoteItemMaxChars = 200;  ///< each step of required_sequence, each do_not_do item

// What the teacher prompt embeds at most (bytes; the start is kept, then a cut marker).
inline constexpr std::size_t kTeacherSourceMaxChars = 24000;   ///< each of the two kernels
inline constexpr std::size_t kTeacherFeedbackMaxChars = 6000;  ///< the wrong kernel's feedback

/// "mha_fwd_causal" → "mha_fwd": the family of a definition's op_type, which notes are shared
/// within. A causal variant belongs to its non-causal family (the "_causal" suffix is removed);
/// any other op_type is its own family.
std::string op_family(std::string_view op_type);

/// The instruction-level part of a note: the contract of one PTX instruction or instruction family
/// that the wrong kernel broke (the idea of the original PTXBench's instruction notes; our fields).
/// Every field is optional (empty); a part whose fields are all empty is no part.
struct InstructionNote {
  std::string instruction;       ///< as code spells it: "wgmma.mma_async.sp", "cp.async.bulk.tensor.2d"
  std::string shape_context;     ///< shapes, dtypes, layouts or tile sizes under which the contract holds
  std::string operand_contract;  ///< what the operands must be: order, state space, types, descriptor fields
  std::vector<std::string> required_sequence;  ///< the steps that must come together, in order
  std::string diagnostics;                     ///< what the failure looks like: message, verdict, symptom
  std::vector<std::string> do_not_do;          ///< tempting wrong forms, one per item

  /// True when no field holds anything.
  [[nodiscard]] bool empty() const noexcept;
  /// Object with all six fields (the two lists as arrays of strings).
  [[nodiscard]] ordered_json to_json() const;
  /// Strict about types and unknown fields; an absent field is empty. Does not check limits
  /// (check_instruction_note does). `path` is the object's field path in messages.
  static InstructionNote from_json(const ordered_json& j, const std::string& document, const std::string& path);
};

/// The fields the teacher writes: four required, each non-empty (after trimming) and within its
/// limit, and the optional instruction part.
struct NoteText {
  std::string what_was_wrong;  ///< the mistake in this wrong kernel, concretely
  std::string rule;            ///< the general rule it broke, stated so it applies to other kernels
  std::string fix;             ///< what the fixed kernel does instead
  std::string example;         ///< a short code snippet (PTX or CUDA) of the correct form
  std::optional<InstructionNote> instruction_note{};  ///< unset in notes written before issue 36
};

/// Where a note came from: one wrong turn and the later turn that fixed it, in the run store.
struct NoteSource {
  std::string run_id;
  int64_t trajectory_id = 0;
  int64_t wrong_turn = 0;  ///< >= 1
  int64_t fixed_turn = 0;  ///< > wrong_turn
  std::string wrong_sha256;  ///< SHA-256 (hex) of the wrong candidate's source
  std::string fixed_sha256;  ///< SHA-256 (hex) of the fixed candidate's source
};

struct RepairNote {
  int64_t id = 0;           ///< set by the store; 0 before
  std::string op_family;    ///< op_family(definition's op_type): "gemm", "mha_fwd", "mha_bwd"
  std::string definition;   ///< the definition of the trajectory
  NoteSource source;
  std::string wrong_status;  ///< the wrong turn's verdict status: a Status name, never PASSED or INFRA_ERROR
  NoteText text;
  std::optional<double> fixed_speedup;  ///< the fixed turn's speedup, when it was timed
  std::string teacher_model;
  double created_at = 0.0;  ///< Unix seconds

  /// Flat JSON object: schema, id, op_family, definition, source {...}, wrong_status, the four
  /// text fields, instruction_note {...} (only when the note has one, so a note without it reads
  /// as before), fixed_speedup (number or null), teacher_model, created_at (Unix seconds).
  [[nodiscard]] ordered_json to_json() const;
  /// Strict (unknown fields, wrong types, a bad status or field over its limit are InputError
  /// naming `document` and the field). instruction_note may be absent or null (no part).
  static RepairNote from_json(const ordered_json& j, const std::string& document = "repair note");
};

/// InputError (naming the field, "instruction_note.<field>") unless the part has some field set,
/// each string is within its limit and not only white space, and each list is within its item
/// count with every item non-empty after trimming and within kNoteItemMaxChars.
void check_instruction_note(const InstructionNote& part, const std::string& document = "repair note");

/// InputError (naming the field) unless every required field is non-empty after trimming and
/// within its limit, and the instruction part, when set, passes check_instruction_note.
void check_note_text(const NoteText& text, const std::string& document = "repair note");

/// InputError unless the note can be stored: op_family is a family (op_family(x) == x), the
/// definition, teacher model and source ids are set, turns ordered, hashes are 64 hex digits, the
/// status is a wrong one, fixed_speedup (when set) finite and positive, and the text checks.
void check_note(const RepairNote& note, const std::string& document = "repair note");

/// The teacher call's two messages.
struct TeacherPrompt {
  std::string system;
  std::string user;
};

/// Asks for one JSON object with the four required NoteText fields and, when the mistake is about
/// how one instruction is used, the optional instruction_note object (all with their limits). Each
/// kernel is embedded up to kTeacherSourceMaxChars, the feedback up to kTeacherFeedbackMaxChars.
TeacherPrompt teacher_prompt(const std::string& wrong_source, const std::string& wrong_feedback,
                             const std::string& fixed_source);

/// Reads a teacher's answer: one JSON object with exactly the four NoteText fields (strings) and
/// optionally instruction_note (an object with any of InstructionNote's fields, or null), on its
/// own or inside one fenced block (```json ... ``` or ``` ... ```, text around the fence ignored).
/// Every string is trimmed; an example field wrapped in its own code fence is unwrapped; an
/// instruction_note that is null or holds nothing is no part. InputError when it is not JSON, not
/// an object, misses a required field or adds an unknown one (at either level), a field has the
/// wrong type, a required field or a list item is empty, or anything is over its limit. An answer
/// without instruction_note (the form before issue 36) is a valid note.
NoteText parse_teacher_answer(const std::string& answer);

/// A Markdown code block: `content` (a final newline added when missing) between fences longer
/// than any run of backticks inside it, so the content cannot close the block early.
std::string fenced(const std::string& content, std::string_view language);

/// Number of Unicode code points of UTF-8 text (continuation bytes not counted).
std::size_t utf8_length(std::string_view text);

}  // namespace ptxbench
