#include "adapt/sft_records.h"

#include "notes/repair_note.h"
#include "common/enum_names.h"
#include "common/json_fields.h"

namespace ptxbench {
namespace {

constexpr EnumName<RecordKind> kKinds[] = {{RecordKind::fixit, "fixit"}, {RecordKind::kernelgen, "kernelgen"}};

ordered_json chat_json(const ChatTurn& m) { return {{"role", m.role}, {"content", m.content}}; }

/// The opening messages; a trajectory without a system prompt gets none (a chat may start with the user).
std::vector<ChatTurn> opening(const std::string& system, const std::string& task) {
  std::vector<ChatTurn> out;
  if (!system.empty()) out.push_back({"system", system});
  out.push_back({"user", task});
  return out;
}

void fill_common(RecordMeta& m, const std::optional<RecordReasoning>& reasoning) {
  if (reasoning) {
    m.teacher_model = reasoning->teacher_model;
    m.reasoning_attempts = reasoning->attempts;
  }
}

}  // namespace

std::string to_string(RecordKind kind) { return enum_name(kKinds, kind); }
RecordKind parse_record_kind(std::string_view text) { return parse_enum(kKinds, text, "record kind"); }

ordered_json RecordMeta::to_json() const {
  ordered_json j = {{"kind", ptxbench::to_string(kind)},
                    {"id", id},
                    {"run", run_id},
                    {"trajectory", trajectory_id},
                    {"definition", key.definition},
                    {"workload", key.workload_uuid},
                    {"prompt_tag", key.prompt_tag},
                    {"trajectory_index", key.index},
                    {"turn", turn},
                    {"label", label}};
  if (kind == RecordKind::fixit) {
    j["pair"] = pair;
    j["wrong_run"] = value_or_null(wrong_run);
    j["wrong_trajectory"] = value_or_null(wrong_trajectory);
    j["wrong_turn"] = value_or_null(wrong_turn);
    j["wrong_status"] = value_or_null(wrong_status);
    j["wrong_sha256"] = value_or_null(wrong_sha256);
  }
  j["status"] = status;
  j["sha256"] = sha256;
  j["speedup"] = value_or_null(speedup);
  j["teacher_model"] = teacher_model.empty() ? ordered_json(nullptr) : ordered_json(teacher_model);
  j["reasoning_attempts"] = reasoning_attempts;
  return j;
}

ordered_json SftRecord::to_json() const {
  PTXB_ENSURE(!messages.empty() && messages.back().role == "assistant", "sft records",
              "a record must end with the assistant message it trains on");
  ordered_json all = ordered_json::array(), prompt = ordered_json::array();
  for (std::size_t i = 0; i < messages.size(); ++i) {
    all.push_back(chat_json(messages[i]));
    if (i + 1 < messages.size()) prompt.push_back(chat_json(messages[i]));
  }
  return {{"messages", all},
          {"prompt", prompt},
          {"completion", ordered_json::array({chat_json(messages.back())})},
          {"meta", meta.to_json()}};
}

std::string SftRecord::jsonl_line() const {
  return to_json().dump(-1, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

std::string final_answer(const std::optional<RecordReasoning>& reasoning, const std::string& kernel_source) {
  std::string block = fenced(kernel_source, "cuda");
  if (!reasoning) return block;
  return "<think>\n" + reasoning->text + "\n</think>\n\n" + block;
}

SftRecord fixit_record(const RepairPair& pair, const std::optional<RecordReasoning>& reasoning,
                       const HeldOutDefinitions& held_out) {
  held_out.check(pair.definition(), "a fixit record");
  SftRecord r;
  r.messages = opening(pair.system, pair.task);
  r.messages.push_back({"assistant", pair.wrong_sha256 ? fenced(pair.wrong_source, "cuda") : pair.wrong_answer});
  r.messages.push_back({"user", pair.wrong_feedback});
  r.messages.push_back({"assistant", final_answer(reasoning, pair.fixed_source)});
  auto& m = r.meta;
  m.kind = RecordKind::fixit;
  m.id = pair.pair_hash();
  m.run_id = pair.run_id;
  m.trajectory_id = pair.trajectory_id;
  m.key = pair.key;
  m.turn = pair.fixed_turn;
  m.wrong_turn = pair.wrong_turn;
  if (!pair.wrong_is_seed) {
    m.pair = "within_trajectory";
    m.wrong_run = pair.run_id;
    m.wrong_trajectory = pair.trajectory_id;
  } else if (pair.wrong_origin) {
    m.pair = "cross_run";
    m.wrong_run = pair.wrong_origin->run_id;
    m.wrong_trajectory = pair.wrong_origin->trajectory_id;
  } else {
    m.pair = "seed";
  }
  m.label = report::label_key(pair.wrong_label);
  m.wrong_status = pair.wrong_status;
  m.wrong_sha256 = pair.wrong_sha256;
  m.status = pair.fixed_status;
  m.sha256 = pair.fixed_sha256;
  m.speedup = pair.fixed_speedup;
  fill_common(m, reasoning);
  return r;
}

SftRecord kernelgen_record(const CorrectKernel& kernel, const std::optional<RecordReasoning>& reasoning,
                           const HeldOutDefinitions& held_out) {
  held_out.check(kernel.definition(), "a kernelgen record");
  SftRecord r;
  r.messages = opening(kernel.system, kernel.task);
  r.messages.push_back({"assistant", final_answer(reasoning, kernel.source)});
  auto& m = r.meta;
  m.kind = RecordKind::kernelgen;
  m.id = kernel.kernel_hash();
  m.run_id = kernel.run_id;
  m.trajectory_id = kernel.trajectory_id;
  m.key = kernel.key;
  m.turn = kernel.turn;
  m.label = report::label_key(report::TurnLabel::correct);
  m.status = kernel.status;
  m.sha256 = kernel.sha256;
  m.speedup = kernel.speedup;
  fill_common(m, reasoning);
  return r;
}

}  // namespace ptxbench
