#include "notes/repair_note.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/text.h"
#include "verdict/status.h"

namespace ptxbench {
namespace {

constexpr std::string_view kCausalSuffix = "_causal";
constexpr std::string_view kCutMarker = "\n[... {} more characters cut ...]";

std::string trim(std::string_view s) {
  const char* ws = " \t\r\n\f\v";
  std::size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return "";
  std::size_t e = s.find_last_not_of(ws);
  return std::string(s.substr(b, e - b + 1));
}

// The body of the first block opened by a line starting with ``` (the rest of that line, the
// info string, is skipped) and closed by a later line starting with ```; to the end when unclosed.
std::optional<std::string> first_fenced_block(const std::string& text) {
  std::size_t open = std::string::npos;
  for (std::size_t pos = text.find("```"); pos != std::string::npos; pos = text.find("```", pos + 1))
    if (pos == 0 || text[pos - 1] == '\n') {
      open = pos;
      break;
    }
  if (open == std::string::npos) return std::nullopt;
  std::size_t body = text.find('\n', open);
  if (body == std::string::npos) return std::string();
  ++body;
  std::size_t close = body;
  while (true) {
    close = text.find("```", close);
    if (close == std::string::npos) return text.substr(body);
    if (text[close - 1] == '\n') return text.substr(body, close - body);
    ++close;
  }
}

// "```cuda\ncode\n```" → "code"; anything else unchanged.
std::string unwrap_fence(const std::string& s) {
  if (s.rfind("```", 0) != 0 || s.size() < 6 || s.compare(s.size() - 3, 3, "```") != 0) return s;
  std::size_t first_line_end = s.find('\n');
  if (first_line_end == std::string::npos) return s;
  std::size_t last_line_start = s.rfind('\n', s.size() - 4);
  if (last_line_start == std::string::npos || last_line_start < first_line_end) return s;
  return trim(std::string_view(s).substr(first_line_end + 1, last_line_start - first_line_end - 1));
}

bool is_sha256_hex(const std::string& s) {
  return s.size() == 64 &&
         std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

/// A string field of T, its JSON name and its limit in characters.
template <class T>
struct TextField {
  const char* name;
  std::string T::*member;
  std::size_t max_chars;
};

constexpr TextField<NoteText> kFieldLimits[] = {
    {"what_was_wrong", &NoteText::what_was_wrong, kWhatWasWrongMaxChars},
    {"rule", &NoteText::rule, kRuleMaxChars},
    {"fix", &NoteText::fix, kFixMaxChars},
    {"example", &NoteText::example, kExampleMaxChars},
};

constexpr const char* kInstructionNoteField = "instruction_note";

struct PartList {
  const char* name;
  std::vector<std::string> InstructionNote::*member;
  std::size_t max_items;
};

// The instruction part's string fields and list fields, each in the order of its JSON object.
constexpr TextField<InstructionNote> kPartTexts[] = {
    {"instruction", &InstructionNote::instruction, kInstructionMaxChars},
    {"shape_context", &InstructionNote::shape_context, kShapeContextMaxChars},
    {"operand_contract", &InstructionNote::operand_contract, kOperandContractMaxChars},
    {"diagnostics", &InstructionNote::diagnostics, kDiagnosticsMaxChars},
};
constexpr PartList kPartLists[] = {
    {"required_sequence", &InstructionNote::required_sequence, kRequiredSequenceMaxSteps},
    {"do_not_do", &InstructionNote::do_not_do, kDoNotDoMaxItems},
};

std::string part_path(const char* field) { return std::string(kInstructionNoteField) + "." + field; }

// The instruction part of a teacher's answer: null or an object; strings and items trimmed; an
// object holding nothing is no part.
std::optional<InstructionNote> answer_part(const JsonChecker& c, const ordered_json& answer) {
  if (!answer.contains(kInstructionNoteField) || answer[kInstructionNoteField].is_null()) return std::nullopt;
  InstructionNote part = InstructionNote::from_json(answer[kInstructionNoteField], c.document(), kInstructionNoteField);
  for (const auto& f : kPartTexts) part.*(f.member) = trim(part.*(f.member));
  for (const auto& f : kPartLists)
    for (auto& item : part.*(f.member)) item = trim(item);
  if (part.empty()) return std::nullopt;
  return part;
}

}  // namespace

bool InstructionNote::empty() const noexcept {
  auto blank = [this](const auto& f) { return (this->*f.member).empty(); };
  return std::all_of(std::begin(kPartTexts), std::end(kPartTexts), blank) &&
         std::all_of(std::begin(kPartLists), std::end(kPartLists), blank);
}

ordered_json InstructionNote::to_json() const {
  return {{"instruction", instruction},       {"shape_context", shape_context}, {"operand_contract", operand_contract},
          {"required_sequence", required_sequence}, {"diagnostics", diagnostics},   {"do_not_do", do_not_do}};
}

InstructionNote InstructionNote::from_json(const ordered_json& j, const std::string& document,
                                           const std::string& path) {
  JsonChecker c(document);
  c.require_object(j, path);
  c.only_fields(j, path,
                {"instruction", "shape_context", "operand_contract", "required_sequence", "diagnostics", "do_not_do"});
  InstructionNote n;
  for (const auto& f : kPartTexts) n.*(f.member) = c.optional_string(j, path, f.name, "");
  for (const auto& f : kPartLists) n.*(f.member) = c.string_list(j, path, f.name);
  return n;
}

void check_instruction_note(const InstructionNote& part, const std::string& document) {
  JsonChecker c(document);
  if (part.empty()) c.fail(kInstructionNoteField, "holds nothing: leave the part out instead");
  for (const auto& f : kPartTexts) {
    const std::string& v = part.*(f.member);
    if (!v.empty() && trim(v).empty()) c.fail(part_path(f.name), "only white space");
    if (std::size_t n = utf8_length(v); n > f.max_chars)
      c.fail(part_path(f.name), fmt::format("{} characters, over the limit of {}", n, f.max_chars));
  }
  for (const auto& f : kPartLists) {
    const std::vector<std::string>& items = part.*(f.member);
    if (items.size() > f.max_items)
      c.fail(part_path(f.name), fmt::format("{} items, over the limit of {}", items.size(), f.max_items));
    for (std::size_t i = 0; i < items.size(); ++i) {
      std::string at = fmt::format("{}[{}]", part_path(f.name), i);
      if (trim(items[i]).empty()) c.fail(at, "empty");
      if (std::size_t n = utf8_length(items[i]); n > kNoteItemMaxChars)
        c.fail(at, fmt::format("{} characters, over the limit of {}", n, kNoteItemMaxChars));
    }
  }
}

std::string fenced(const std::string& content, std::string_view language) {
  std::size_t longest = 0, run = 0;
  for (char c : content) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  std::string fence(std::max<std::size_t>(3, longest + 1), '`');
  std::string body = content;
  if (body.empty() || body.back() != '\n') body += '\n';
  return fence + std::string(language) + "\n" + body + fence + "\n";
}

std::string op_family(std::string_view op_type) {
  if (op_type.size() > kCausalSuffix.size() && op_type.substr(op_type.size() - kCausalSuffix.size()) == kCausalSuffix)
    return std::string(op_type.substr(0, op_type.size() - kCausalSuffix.size()));
  return std::string(op_type);
}

std::size_t utf8_length(std::string_view text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

void check_note_text(const NoteText& text, const std::string& document) {
  JsonChecker c(document);
  for (const auto& f : kFieldLimits) {
    const std::string& v = text.*(f.member);
    if (trim(v).empty()) c.fail(f.name, "empty");
    std::size_t n = utf8_length(v);
    if (n > f.max_chars)
      c.fail(f.name, fmt::format("{} characters, over the limit of {}", n, f.max_chars));
  }
  if (text.instruction_note) check_instruction_note(*text.instruction_note, document);
}

void check_note(const RepairNote& note, const std::string& document) {
  JsonChecker c(document);
  if (note.op_family.empty()) c.fail("op_family", "empty");
  if (op_family(note.op_family) != note.op_family)
    c.fail("op_family", "'" + note.op_family + "' is an op_type, not its family '" + op_family(note.op_family) + "'");
  if (note.definition.empty()) c.fail("definition", "empty");
  if (note.teacher_model.empty()) c.fail("teacher_model", "empty");
  const NoteSource& s = note.source;
  if (s.run_id.empty()) c.fail("source.run_id", "empty");
  if (s.trajectory_id < 1) c.fail("source.trajectory_id", "must be at least 1");
  if (s.wrong_turn < 1) c.fail("source.wrong_turn", "must be at least 1");
  if (s.fixed_turn <= s.wrong_turn) c.fail("source.fixed_turn", "must come after wrong_turn");
  if (!is_sha256_hex(s.wrong_sha256)) c.fail("source.wrong_sha256", "expected 64 lower-case hex digits");
  if (!is_sha256_hex(s.fixed_sha256)) c.fail("source.fixed_sha256", "expected 64 lower-case hex digits");
  auto status = parse_status(note.wrong_status);
  if (!status) c.fail("wrong_status", "'" + note.wrong_status + "' is not a verdict status");
  if (*status == Status::PASSED || *status == Status::INFRA_ERROR)
    c.fail("wrong_status", note.wrong_status + " is not the status of a wrong kernel");
  if (note.fixed_speedup && !(std::isfinite(*note.fixed_speedup) && *note.fixed_speedup > 0))
    c.fail("fixed_speedup", "must be a finite positive number");
  if (!std::isfinite(note.created_at) || note.created_at < 0) c.fail("created_at", "must be a finite time >= 0");
  check_note_text(note.text, document);
}

ordered_json RepairNote::to_json() const {
  ordered_json j;
  j["schema"] = kRepairNoteSchema;
  j["id"] = id;
  j["op_family"] = op_family;
  j["definition"] = definition;
  j["source"] = {{"run_id", source.run_id},           {"trajectory_id", source.trajectory_id},
                 {"wrong_turn", source.wrong_turn},   {"fixed_turn", source.fixed_turn},
                 {"wrong_sha256", source.wrong_sha256}, {"fixed_sha256", source.fixed_sha256}};
  j["wrong_status"] = wrong_status;
  j["what_was_wrong"] = text.what_was_wrong;
  j["rule"] = text.rule;
  j["fix"] = text.fix;
  j["example"] = text.example;
  if (text.instruction_note) j[kInstructionNoteField] = text.instruction_note->to_json();
  j["fixed_speedup"] = fixed_speedup ? ordered_json(*fixed_speedup) : ordered_json(nullptr);
  j["teacher_model"] = teacher_model;
  j["created_at"] = created_at;
  return j;
}

RepairNote RepairNote::from_json(const ordered_json& j, const std::string& document) {
  JsonChecker c(document);
  c.only_fields(j, "", {"schema", "id", "op_family", "definition", "source", "wrong_status", "what_was_wrong", "rule",
                        "fix", "example", kInstructionNoteField, "fixed_speedup", "teacher_model", "created_at"});
  if (std::string schema = c.string_field(j, "", "schema"); schema != kRepairNoteSchema)
    c.fail("schema", "'" + schema + "' is not a repair note (" + kRepairNoteSchema + ")");
  RepairNote n;
  n.id = c.int_in(j, "", "id", 0, INT64_MAX);
  n.op_family = c.string_field(j, "", "op_family");
  n.definition = c.string_field(j, "", "definition");
  const ordered_json& s = c.member(j, "", "source");
  c.only_fields(s, "source", {"run_id", "trajectory_id", "wrong_turn", "fixed_turn", "wrong_sha256", "fixed_sha256"});
  n.source.run_id = c.string_field(s, "source", "run_id");
  n.source.trajectory_id = c.int_field(s, "source", "trajectory_id");
  n.source.wrong_turn = c.int_field(s, "source", "wrong_turn");
  n.source.fixed_turn = c.int_field(s, "source", "fixed_turn");
  n.source.wrong_sha256 = c.string_field(s, "source", "wrong_sha256");
  n.source.fixed_sha256 = c.string_field(s, "source", "fixed_sha256");
  n.wrong_status = c.string_field(j, "", "wrong_status");
  n.text.what_was_wrong = c.string_field(j, "", "what_was_wrong");
  n.text.rule = c.string_field(j, "", "rule");
  n.text.fix = c.string_field(j, "", "fix");
  n.text.example = c.string_field(j, "", "example");
  if (j.contains(kInstructionNoteField) && !j[kInstructionNoteField].is_null())
    n.text.instruction_note = InstructionNote::from_json(j[kInstructionNoteField], document, kInstructionNoteField);
  if (!c.member(j, "", "fixed_speedup").is_null()) n.fixed_speedup = c.number_in(j, "", "fixed_speedup", 0.0, INFINITY, true);
  n.teacher_model = c.string_field(j, "", "teacher_model");
  n.created_at = c.number_in(j, "", "created_at", 0.0);
  check_note(n, document);
  return n;
}

namespace {

// The optional part of the answer, with its limits: asked for only where the mistake is about how
// one instruction (family) is used, so that a note about a launch bound or an index stays short.
std::string instruction_note_request() {
  return fmt::format(
      "- \"instruction_note\" (optional): when the mistake is about how one PTX instruction or instruction family "
      "must be used, an object with any of these fields; leave out a field the kernels and feedback do not show, "
      "and leave out the whole object (or give null) when the mistake is not about one instruction:\n"
      "  - \"instruction\" (string, at most {} characters): the instruction or family as the code spells it, for "
      "example wgmma.mma_async.sp.sync.aligned or cp.async.bulk.tensor.2d.\n"
      "  - \"shape_context\" (string, at most {} characters): the shapes, data types, layouts or tile sizes under "
      "which what follows holds.\n"
      "  - \"operand_contract\" (string, at most {} characters): what the operands must be: their order, state "
      "spaces, register types, descriptor fields and immediates.\n"
      "  - \"required_sequence\" (list of at most {} strings): the instructions or steps that must come together, "
      "in their order.\n"
      "  - \"diagnostics\" (string, at most {} characters): how the failure shows: the compiler or assembler "
      "message, the verdict, the wrong output or the hang.\n"
      "  - \"do_not_do\" (list of at most {} strings): the tempting wrong forms to avoid, one per item.\n"
      "  Each list item is at most {} characters.\n",
      kInstructionMaxChars, kShapeContextMaxChars, kOperandContractMaxChars, kRequiredSequenceMaxSteps,
      kDiagnosticsMaxChars, kDoNotDoMaxItems, kNoteItemMaxChars);
}

}  // namespace

TeacherPrompt teacher_prompt(const std::string& wrong_source, const std::string& wrong_feedback,
                             const std::string& fixed_source) {
  TeacherPrompt p;
  p.system = fmt::format(
      "You are an expert in CUDA and PTX for NVIDIA Hopper (sm_90a) GPUs. You are shown a kernel that an "
      "evaluator rejected, the evaluator's feedback on it, and a later kernel of the same attempt that the "
      "evaluator accepted. Write a repair note for another model whose own kernel fails in a similar way, so "
      "that it finds and fixes the same mistake.\n"
      "\n"
      "Answer with one JSON object and nothing else. It has these four string fields, all required:\n"
      "- \"what_was_wrong\" (at most {} characters): the mistake in the rejected kernel, concretely: the "
      "instruction, operand, index, barrier or launch parameter at fault, and the failure it caused.\n"
      "- \"rule\" (at most {} characters): the general rule the mistake broke, stated so that it holds for other "
      "kernels too, not only this one.\n"
      "- \"fix\" (at most {} characters): what the accepted kernel does instead.\n"
      "- \"example\" (at most {} characters): a short code snippet (PTX or CUDA) of the correct form.\n"
      "and may have one more field:\n"
      "{}"
      "\n"
      "Write PTX instructions and identifiers exactly as the code spells them (for example "
      "mbarrier.try_wait.parity.shared::cta.b64), so that the note can be found from the identifiers of a "
      "failing kernel. Do not copy the kernels into the note.",
      kWhatWasWrongMaxChars, kRuleMaxChars, kFixMaxChars, kExampleMaxChars, instruction_note_request());
  std::string wrong = cut(wrong_source, kTeacherSourceMaxChars, kCutMarker);
  std::string feedback = cut(wrong_feedback, kTeacherFeedbackMaxChars, kCutMarker);
  std::string fixed = cut(fixed_source, kTeacherSourceMaxChars, kCutMarker);
  p.user = "## Rejected kernel\n\n" + fenced(wrong, "cuda") + "\n## Evaluator feedback on the rejected kernel\n\n" +
           fenced(feedback, "text") + "\n## Accepted kernel (the fix)\n\n" + fenced(fixed, "cuda") +
           "\nWrite the repair note as one JSON object with the fields what_was_wrong, rule, fix and example, and "
           "instruction_note when the mistake is about how one instruction is used.\n";
  return p;
}

NoteText parse_teacher_answer(const std::string& answer) {
  const std::string document = "teacher answer";
  std::string body = trim(answer);
  if (body.empty()) throw InputError("repair note", document + ": empty answer");
  if (body.front() != '{')
    if (auto block = first_fenced_block(body)) body = trim(*block);
  JsonChecker c(document);
  ordered_json j = c.parse(body);
  c.only_fields(j, "", {"what_was_wrong", "rule", "fix", "example", kInstructionNoteField});
  NoteText t;
  for (const auto& f : kFieldLimits) t.*(f.member) = trim(c.string_field(j, "", f.name));
  t.example = unwrap_fence(t.example);
  t.instruction_note = answer_part(c, j);
  check_note_text(t, document);
  return t;
}

}  // namespace ptxbench
