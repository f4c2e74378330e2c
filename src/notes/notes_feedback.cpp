#include "notes/notes_feedback.h"

#include "common/enum_names.h"
#include "common/text.h"

namespace ptxbench {
namespace {

constexpr EnumName<NotesMode> kModeNames[] = {
    {NotesMode::off, "off"}, {NotesMode::notes, "notes"}, {NotesMode::notes_and_kernel, "notes+kernel"}};

constexpr std::string_view kNotesHeading =
    "## Repair notes\n"
    "Notes written from earlier kernels of this operation family that failed and were then fixed, most relevant "
    "first. Use the ones that apply to your kernel.\n";

constexpr std::string_view kKernelHeading =
    "\n## Fastest fixed kernel\n"
    "The fastest of the fixed kernels these notes came from. It passed for its own definition, which may differ "
    "from yours in shapes or options.\n";

constexpr std::string_view kCutMarker = "\n[... {} more characters cut ...]";
// The marker with the longest count it can hold (20 digits).
constexpr std::size_t kCutMarkerMaxChars = kCutMarker.size() - 2 + 20;

// One line per field the instruction part sets: the sequence on one line joined by arrows (its
// order is the point), each do-not item on a line of its own (items often end in ';').
std::string render_instruction_part(const InstructionNote& part) {
  std::string out;
  auto line = [&](std::string_view label, const std::string& value) {
    if (!value.empty()) out += std::string(label) + ": " + value + "\n";
  };
  line("Instruction", part.instruction);
  line("Shape context", part.shape_context);
  line("Operand contract", part.operand_contract);
  std::string sequence;
  for (const auto& step : part.required_sequence) sequence += (sequence.empty() ? "" : " → ") + step;
  line("Required sequence", sequence);
  line("Diagnostics", part.diagnostics);
  for (const auto& item : part.do_not_do) line("Do not", item);
  return out;
}

std::string render_note(std::size_t index, const RepairNote& n) {
  std::string part = n.text.instruction_note ? render_instruction_part(*n.text.instruction_note) : "";
  return "\n### Note " + std::to_string(index) + " (from a kernel that got " + n.wrong_status + ")\n" +
         "What was wrong: " + n.text.what_was_wrong + "\n" + "Rule: " + n.text.rule + "\n" + "Fix: " + n.text.fix +
         "\n" + part + "Example:\n" + fenced(n.text.example, "");
}

// The kernel block within `budget` bytes, or "" when not even a cut start of it fits usefully.
std::string render_kernel(const std::string& source, std::size_t budget) {
  std::string whole = std::string(kKernelHeading) + fenced(source, "cuda");
  if (whole.size() <= budget) return whole;
  std::size_t overhead = whole.size() - source.size() + 1;  // heading, fences, a final newline
  if (budget < overhead + kCutMarkerMaxChars + 1) return "";
  std::string start = cut(source, budget - overhead - kCutMarkerMaxChars, kCutMarker);
  return std::string(kKernelHeading) + fenced(start, "cuda");
}

}  // namespace

std::string to_string(NotesMode mode) { return enum_name(kModeNames, mode); }

NotesMode parse_notes_mode(std::string_view text) { return parse_enum(kModeNames, text, "notes mode"); }

std::string append_notes(const std::string& feedback, const std::vector<ScoredNote>& notes, NotesMode mode,
                         const std::optional<std::string>& fastest_fixed_kernel) {
  if (mode == NotesMode::off || notes.empty()) return feedback;
  std::string appendix(kNotesHeading);
  std::size_t shown = 0;
  for (const auto& n : notes) {
    std::string block = render_note(shown + 1, n.note);
    if (appendix.size() + block.size() > kNotesSectionMaxChars) break;
    appendix += block;
    ++shown;
  }
  if (shown == 0) return feedback;
  if (mode == NotesMode::notes_and_kernel && fastest_fixed_kernel)
    appendix += render_kernel(*fastest_fixed_kernel, kNotesAppendixMaxChars - appendix.size());
  std::string separator = feedback.empty() ? "" : feedback.back() == '\n' ? "\n" : "\n\n";
  return feedback + separator + appendix;
}

std::string feedback_with_notes(const std::string& feedback, const NotesStore& store,
                                const std::string& failing_kernel_source, std::string_view op_type, NotesMode mode,
                                int k) {
  if (mode == NotesMode::off) return feedback;
  std::vector<ScoredNote> notes = store.retrieve(failing_kernel_source, op_family(op_type), k);
  std::optional<std::string> kernel;
  if (mode == NotesMode::notes_and_kernel && !notes.empty()) kernel = store.fastest_fixed_kernel(notes);
  return append_notes(feedback, notes, mode, kernel);
}

}  // namespace ptxbench
