#include "agent/run_preflight.h"

#include <semaphore>

#include "common/error.h"
#include "service/access_token.h"
#include "agent/turn_loop.h"
#include "service/eval_request.h"

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

}  // namespace

void check_run_config(RunTools& tools, const RunConfig& c, const fs::path& root) {
  tools.catalog.emplace(Catalog::load(root));
  tools.prompts.emplace(root);
  const Catalog& catalog = *tools.catalog;
  tools.tags = c.prompt_tags.empty() ? tools.prompts->default_tags() : c.prompt_tags;
  for (const auto& d : c.definitions) {
    (void)catalog.definition(d);
    // The request a turn would send, checked as the service checks it.
    EvalRequest probe = evaluation_request({d, c.workload, "", 0}, "// config check", c);
    (void)parse_eval_request(probe.to_json().dump(), catalog, EvalRequestLimits{}, "run config");
    const Definition& def = catalog.definition(d);
    const Workload& w = c.workload.empty() ? catalog.default_workload(d) : catalog.find_workload(d, c.workload);
    if (!c.workloads.empty()) (void)select_workloads(catalog, d, c.workloads);  // every definition has the sweep's workloads
    for (const auto& t : tools.tags) (void)tools.prompts->build(def, resolve_workload(def, w), t, c.arch);
  }
  if (c.repair_notes.enabled())
    tools.notes = std::make_unique<NotesStore>(c.repair_notes.store, NotesStore::Open::existing);
}

void connect_run(RunTools& tools, const RunConfig& c, const AgentRunSetup& setup) {
  std::unique_ptr<Policy> p;
  if (c.policy == "expert") {
    p = make_expert_policy(setup.root, c.language);
  } else if (c.policy == "replay") {
    p = make_replay_policy(c.replay_store, c.replay_run);
  } else {
    if (std::string missing = missing_api_key(*c.model); !missing.empty()) throw InputError("run config: model", missing);
    probe_model_endpoint(*c.model);
    ClientHooks hooks;
    RunControl* control = &tools.control;
    ModelConfig model = *c.model;
    hooks.on_retry = [control, model](const ModelApiError& failure, double wait_s) {
      control->notice(retry_notice(model, failure, wait_s));
    };
    p = make_model_policy(std::shared_ptr<ModelClient>(make_model_client(*c.model, std::move(hooks))), *c.model);
  }
  tools.policy = std::make_unique<ThrottledPolicy>(std::move(p), c.model_concurrency);
  std::string url = c.service;
  bool fake = false;
  if (c.service == "local") {
    fs::path db = fs::path(setup.store).parent_path() / "service.db";
    if (db.has_parent_path()) fs::create_directories(db.parent_path());
    tools.local = std::make_unique<LocalService>(setup.ptxbench, db, setup.local_service_args);
    url = tools.local->url();
    fake = fake_gpus_in(setup.local_service_args);
  }
  tools.service = std::make_unique<ServiceClient>(url, service_client_options(c.service_token_file));
  // Fail now, not after the first model answers, when the service is away, refuses our token or
  // lacks a definition.
  tools.service->require_definitions(c.definitions, "run");
  tools.evaluation = make_service_evaluation(*tools.service, fake);
}

bool fake_gpus_in(const std::vector<std::string>& args) {
  auto positive = [](const std::string& n) {
    return !n.empty() && n.size() < 10 && n.find_first_not_of("0123456789") == std::string::npos && std::stol(n) > 0;
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--fake-gpus" && i + 1 < args.size() && positive(args[i + 1])) return true;
    if (a.rfind("--fake-gpus=", 0) == 0 && positive(a.substr(12))) return true;
  }
  return false;
}

std::vector<TrajectoryKey> trajectory_keys(const RunConfig& c, const std::vector<std::string>& tags) {
  std::vector<TrajectoryKey> keys;
  if (c.repair_from) {
    // A repair run: one trajectory per seed and tag; the index is the seed's position.
    for (const auto& t : tags)
      for (std::size_t i = 0; i < c.repair_from->seeds.size(); ++i)
        keys.push_back({c.repair_from->seeds[i].definition, c.workload, repair_prompt_tag(t), static_cast<int64_t>(i)});
  } else {
    for (const auto& d : c.definitions)
      for (const auto& t : tags)
        for (int i = 0; i < c.trajectories_per_tag; ++i) keys.push_back({d, c.workload, t, i});
  }
  return keys;
}

}  // namespace ptxbench
