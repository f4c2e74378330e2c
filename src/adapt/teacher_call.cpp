#include "adapt/teacher_call.h"

namespace ptxbench {

TeacherOutcome ask_teacher(ModelClient& client, int attempts, const TeacherPromptFn& prompt, const AnswerReader& read,
                           std::atomic<int64_t>& calls) {
  TeacherOutcome r;
  for (int attempt = 1; attempt <= attempts && !r.accepted; ++attempt) {
    ChatRequest call = prompt(r.rejections);
    ++calls;
    ChatResponse answer = client.complete(call);
    r.attempts = attempt;
    if (answer.finish_reason == FinishReason::length) {
      r.rejections.push_back(kCutAnswerRejection);
      continue;
    }
    AnswerCheck check = read(answer.text);
    if (!check.value) {
      r.rejections.push_back(check.rejection);
      continue;
    }
    r.accepted = true;
    r.value = std::move(*check.value);
  }
  return r;
}

TeacherCache::TeacherCache(fs::path dir, std::string schema, std::string value_field)
    : m_dir(std::move(dir)), m_schema(std::move(schema)), m_value_field(std::move(value_field)) {}

fs::path TeacherCache::path(const std::string& key) const { return m_dir / (key + ".json"); }

std::optional<TeacherOutcome> TeacherCache::load(const std::string& key, int attempts,
                                                 const std::function<bool(const std::string&)>& still_valid) const {
  fs::path file = path(key);
  if (!fs::exists(file)) return std::nullopt;
  TeacherOutcome r;
  try {
    auto j = ordered_json::parse(read_file(file));
    if (j.value("schema", "") != m_schema || j.value("key", "") != key) return std::nullopt;
    r.accepted = j.at("accepted").get<bool>();
    r.value = j.at(m_value_field).get<std::string>();
    r.attempts = j.at("attempts").get<int>();
    r.rejections = j.at("rejections").get<std::vector<std::string>>();
  } catch (const std::exception&) {
    return std::nullopt;  // a damaged entry is asked again and overwritten
  }
  r.from_cache = true;
  if (r.accepted) return still_valid(r.value) ? std::optional(r) : std::nullopt;
  if (r.attempts >= attempts) return r;
  return std::nullopt;
}

void TeacherCache::store(const std::string& key, const ordered_json& header, const TeacherOutcome& outcome,
                         const ordered_json& trailer) const {
  ordered_json entry = {{"schema", m_schema}};
  if (header.is_object())
    for (const auto& [name, value] : header.items()) entry[name] = value;
  entry["key"] = key;
  entry["accepted"] = outcome.accepted;
  entry["attempts"] = outcome.attempts;
  entry["rejections"] = outcome.rejections;
  entry[m_value_field] = outcome.value;
  if (trailer.is_object())
    for (const auto& [name, value] : trailer.items()) entry[name] = value;
  write_file_atomic(path(key), entry.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n");
}

}  // namespace ptxbench
