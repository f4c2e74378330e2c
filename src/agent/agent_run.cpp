#include "agent/agent_run.h"

#include <fmt/format.h>

#include <atomic>
#include <set>
#include <semaphore>
#include <thread>

#include "adapt/notes_store.h"
#include "agent/policy.h"
#include "agent/progress.h"
#include "agent/run_store.h"
#include "agent/trajectory_export.h"
#include "agent/turn_loop.h"
#include "common/error.h"
#include "definitions/catalog.h"
#include "prompt/prompt_builder.h"
#include "service/access_token.h"
#include "service/eval_request.h"
#include "service/local_service.h"
#include "service/service_client.h"

namespace ptxbench {
namespace {

// Caps the model calls in flight (the provider's concurrency limit), whatever the trajectory count.
class ThrottledPolicy final : public Policy {
 public:
  ThrottledPolicy(std::unique_ptr<Policy> inner, int limit) : m_inner(std::move(inner)), m_slots(limit) {}
  [[nodiscard]] std::string name() const override { return m_inner->name(); }
  PolicyAnswer answer(const PolicyRequest& r) override {
    m_slots.acquire();
    struct Release {
      std::counting_semaphore<1024>& s;
      ~Release() { s.release(); }
    } release{m_slots};
    return m_inner->answer(r);
  }

 private:
  std::unique_ptr<Policy> m_inner;
  std::counting_semaphore<1024> m_slots;
};

std::unique_ptr<Policy> make_policy(const RunConfig& c, const fs::path& root) {
  std::unique_ptr<Policy> p;
  if (c.policy == "expert") p = make_expert_policy(root, c.language);
  else if (c.policy == "replay") p = make_replay_policy(c.replay_store, c.replay_run);
  else p = make_model_policy(std::shared_ptr<ModelClient>(make_model_client(*c.model)), *c.model);
  return std::make_unique<ThrottledPolicy>(std::move(p), c.model_concurrency);
}

// Everything a config names must exist before the first model call: definitions, workload,
// prompt tags, evaluation options (checked the way the service will check them).
std::vector<std::string> check_config(const RunConfig& c, const Catalog& catalog, const PromptBuilder& prompts) {
  std::vector<std::string> tags = c.prompt_tags.empty() ? prompts.default_tags() : c.prompt_tags;
  for (const auto& d : c.definitions) {
    (void)catalog.definition(d);
    ordered_json probe = {{"definition", d}, {"source", "// config check"}};
    if (!c.workload.empty()) probe["workload"] = c.workload;
    if (!c.eval_options.empty()) probe["options"] = c.eval_options;
    if (c.language != CandidateLanguage::cuda) probe["language"] = to_string(c.language);
    (void)parse_eval_request(probe.dump(), catalog, EvalRequestLimits{}, "run config");
    const Definition& def = catalog.definition(d);
    const Workload& w = c.workload.empty() ? catalog.default_workload(d) : catalog.find_workload(d, c.workload);
    for (const auto& t : tags) (void)prompts.build(def, resolve_workload(def, w), t, c.arch);
  }
  return tags;
}

AgentRunResult execute(RunStore& store, const std::string& run_id, const RunConfig& c, const AgentRunSetup& setup,
                       bool resuming) {
  Catalog catalog = Catalog::load(setup.root);
  PromptBuilder prompts(setup.root);
  std::vector<std::string> tags = check_config(c, catalog, prompts);
  // Opened once for the run and shared by every trajectory (NotesStore is thread-safe); the loop
  // only reads it.
  std::unique_ptr<NotesStore> notes;
  if (c.repair_notes.enabled()) notes = std::make_unique<NotesStore>(c.repair_notes.store, NotesStore::Open::existing);
  std::vector<int64_t> ids;
  std::map<int64_t, std::string> labels;
  auto add = [&](const TrajectoryKey& key) {
    int64_t id = store.ensure_trajectory(run_id, key);
    if (resuming && store.trajectory(id).status == TrajectoryStatus::failed) store.reopen_trajectory(id);
    ids.push_back(id);
    labels[id] = fmt::format("{}/{}#{}", key.definition, key.prompt_tag, key.index);
  };
  if (c.repair_from) {
    // A repair run: one trajectory per seed and tag; the index is the seed's position.
    for (const auto& t : tags)
      for (std::size_t i = 0; i < c.repair_from->seeds.size(); ++i)
        add({c.repair_from->seeds[i].definition, c.workload, repair_prompt_tag(t), static_cast<int64_t>(i)});
  } else {
    for (const auto& d : c.definitions)
      for (const auto& t : tags)
        for (int i = 0; i < c.trajectories_per_tag; ++i) add({d, c.workload, t, i});
  }
  std::unique_ptr<Policy> policy = make_policy(c, setup.root);
  std::unique_ptr<LocalService> local;
  std::string url = c.service;
  if (c.service == "local") {
    fs::path db = fs::path(store.path()).parent_path() / "service.db";
    local = std::make_unique<LocalService>(setup.ptxbench, db, setup.local_service_args);
    url = local->url();
  }
  ServiceClient service(url, service_client_options(c.service_token_file));
  // Fail now, not after the first model answers, when the service is away, refuses our token or
  // lacks a definition.
  service.require_definitions(c.definitions, "run");
  ProgressDisplay progress(labels, setup.tty);
  std::atomic<std::size_t> next{0};
  std::mutex errors_mutex;
  auto worker = [&] {
    TrajectoryRunner runner(store, *policy, service, c, catalog, prompts, run_id, notes.get());
    for (std::size_t i = next++; i < ids.size(); i = next++) {
      try {
        runner.run(ids[i], [&](const TurnEvent& e) { progress.on_event(e); });
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(errors_mutex);
        fmt::print(stderr, "[run] {} stopped (resume with `ptxbench run --resume {}`): {}\n", labels[ids[i]], run_id, e.what());
      }
    }
  };
  std::vector<std::thread> threads;
  for (int k = 0; k < std::min<int>(c.concurrency, static_cast<int>(ids.size())); ++k) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  progress.finish();

  AgentRunResult r;
  r.run_id = run_id;
  r.trajectories = static_cast<int>(ids.size());
  for (int64_t id : ids) {
    TrajectoryStatus s = store.trajectory(id).status;
    if (s == TrajectoryStatus::failed) ++r.failed;
    if (s == TrajectoryStatus::running) ++r.unfinished;
  }
  store.set_run_status(run_id, r.complete() ? RunStatus::finished : RunStatus::interrupted);
  export_run(store, run_id, setup.runs_dir);
  return r;
}

}  // namespace

AgentRunResult start_run(const RunConfig& config, const AgentRunSetup& setup) {
  if (fs::path(setup.store).has_parent_path()) fs::create_directories(fs::path(setup.store).parent_path());
  RunStore store(setup.store);
  std::string model = config.model ? config.model->model : config.policy;
  // The notes name the repair conditions, so the report's runs table tells them apart.
  std::string run_id = store.create_run(config.to_json(), model, run_notes(config));
  fmt::print("[run] {} started: store {}, {} definition(s), policy {}\n", run_id, setup.store, config.definitions.size(),
             config.policy == "model" ? model : config.policy);
  std::fflush(stdout);
  return execute(store, run_id, config, setup, false);
}

AgentRunResult resume_run(const std::string& run_id, const AgentRunSetup& setup) {
  RunStore store(setup.store, RunStore::Open::existing);
  RunConfig config = run_config_from_json(store.run_config(run_id), "run " + run_id + " config");
  store.set_run_status(run_id, RunStatus::running);
  fmt::print("[run] {} resumed\n", run_id);
  std::fflush(stdout);
  return execute(store, run_id, config, setup, true);
}

}  // namespace ptxbench
