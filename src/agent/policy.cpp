#include "agent/policy.h"

#include <map>
#include <mutex>

#include "common/error.h"
#include "suite/candidate_suite.h"

namespace ptxbench {
namespace {

class ModelPolicy final : public Policy {
 public:
  ModelPolicy(std::shared_ptr<ModelClient> client, ModelConfig config) : m_client(std::move(client)), m_config(std::move(config)) {}
  [[nodiscard]] std::string name() const override { return std::string(to_string(m_config.provider)) + ":" + m_config.model; }
  PolicyAnswer answer(const PolicyRequest& r) override {
    ChatRequest req;
    req.system = r.system;
    for (const auto& m : r.conversation) req.messages.push_back({m.role, m.content});
    ChatResponse resp = m_client->complete(req);
    PolicyAnswer a;
    a.text = resp.text;
    a.reasoning = resp.reasoning;
    a.usage.prompt_tokens = resp.usage.prompt_tokens;
    a.usage.completion_tokens = resp.usage.completion_tokens;
    a.usage.reasoning_tokens = resp.usage.reasoning_tokens;
    a.usage.cached_tokens = resp.usage.cached_tokens;
    a.usage.latency_s = resp.total_s;
    a.usage.attempts = resp.attempts;
    a.usage.provider = std::string(to_string(m_config.provider));
    a.usage.model = resp.model.empty() ? m_config.model : resp.model;
    a.usage.finish_reason = std::string(to_string(resp.finish_reason));
    return a;
  }

 private:
  std::shared_ptr<ModelClient> m_client;
  ModelConfig m_config;
};

class ExpertPolicy final : public Policy {
 public:
  ExpertPolicy(fs::path root, CandidateLanguage language) : m_root(std::move(root)), m_language(language) {}
  [[nodiscard]] std::string name() const override { return "expert"; }
  PolicyAnswer answer(const PolicyRequest& r) override {
    ExpertSource e = source_for(r.key->definition);
    PolicyAnswer a;
    a.text = "The bundled reference kernel for " + r.key->definition + " (" + e.origin + ").\n\n```" +
             (m_language == CandidateLanguage::triton ? "python" : "cuda") + "\n" + e.source +
             (e.source.empty() || e.source.back() == '\n' ? "" : "\n") + "```\n";
    a.usage.provider = "builtin";
    a.usage.model = "expert";
    a.usage.finish_reason = "stop";
    return a;
  }

 private:
  // Looked up once per definition (it may read every suite under tests/fixtures).
  ExpertSource source_for(const std::string& definition) {
    std::lock_guard<std::mutex> lock(m_mutex);
    auto it = m_sources.find(definition);
    if (it == m_sources.end()) it = m_sources.emplace(definition, find_expert_source(m_root, definition, m_language)).first;
    return it->second;
  }
  fs::path m_root;
  CandidateLanguage m_language;
  std::mutex m_mutex;
  std::map<std::string, ExpertSource> m_sources;
};

class ReplayPolicy final : public Policy {
 public:
  ReplayPolicy(const std::string& store_path, std::string run_id)
      : m_store(store_path, RunStore::Open::existing), m_run(std::move(run_id)) {
    (void)m_store.run(m_run);  // unknown run: fail now
  }
  [[nodiscard]] std::string name() const override { return "replay:" + m_run; }
  PolicyAnswer answer(const PolicyRequest& r) override {
    std::lock_guard<std::mutex> lock(m_mutex);
    auto id = m_store.find_trajectory(m_run, *r.key);
    if (!id)
      throw InputError("replay", "run " + m_run + " has no trajectory " + r.key->definition + "/" + r.key->prompt_tag + "#" +
                                     std::to_string(r.key->index));
    for (const auto& t : m_store.turns(*id))
      if (t.turn == r.turn && t.answer) {
        PolicyAnswer a;
        a.text = *t.answer;
        a.reasoning = t.reasoning.value_or("");
        if (t.usage) a.usage = *t.usage;
        return a;
      }
    throw InputError("replay", "run " + m_run + " has no answer for turn " + std::to_string(r.turn) + " of " +
                                   r.key->definition + "/" + r.key->prompt_tag + "#" + std::to_string(r.key->index));
  }

 private:
  std::mutex m_mutex;
  RunStore m_store;
  std::string m_run;
};

}  // namespace

std::unique_ptr<Policy> make_model_policy(std::shared_ptr<ModelClient> client, const ModelConfig& config) {
  return std::make_unique<ModelPolicy>(std::move(client), config);
}
std::unique_ptr<Policy> make_expert_policy(const fs::path& root, CandidateLanguage language) {
  return std::make_unique<ExpertPolicy>(root, language);
}
std::unique_ptr<Policy> make_replay_policy(const std::string& store_path, const std::string& run_id) {
  return std::make_unique<ReplayPolicy>(store_path, run_id);
}

ExpertSource find_expert_source(const fs::path& root, const std::string& definition, CandidateLanguage language) {
  if (language == CandidateLanguage::cuda)
    for (const char* pack : {"hopper", "blackwell"}) {
      fs::path p = root / "knowledge" / pack / "experts" / (definition + ".cu");
      if (fs::exists(p)) return {read_file(p), fs::relative(p, root).string()};
    }
  // Then the packs' expert suites (a variant is an edit of an expert: the causal forward), then
  // the fixtures' passing kernels.
  std::vector<fs::path> suites;
  for (const fs::path& dir : {root / "knowledge" / "hopper" / "experts", root / "knowledge" / "blackwell" / "experts",
                              root / "tests" / "fixtures"}) {
    std::vector<fs::path> found;
    if (fs::exists(dir))
      for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.is_regular_file() && e.path().extension() == ".json") found.push_back(e.path());
    std::sort(found.begin(), found.end());
    suites.insert(suites.end(), found.begin(), found.end());
  }
  for (const auto& file : suites) {
    CandidateSuite suite;
    try {
      suite = load_suite(file);
    } catch (const InputError&) {
      continue;  // not a suite file
    }
    if (suite.definition != definition) continue;
    for (const auto& c : suite.cases)  // a case of the run's language: a Triton run answers Python
      if (c.expect.status == Status::PASSED && c.language == language)
        return {c.source, fs::relative(file, root).string() + ":" + c.name};
  }
  if (language == CandidateLanguage::triton)
    throw InputError("expert policy", "no passing Triton fixture (tests/fixtures/**/*.json, a case with language triton) for "
                                      "definition '" + definition + "'");
  throw InputError("expert policy", "no expert kernel (knowledge/*/experts/" + definition +
                                        ".cu) and no passing fixture for definition '" + definition + "'");
}

}  // namespace ptxbench
