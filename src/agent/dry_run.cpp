#include "agent/dry_run.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "agent/run_preflight.h"
#include "runs/run_store.h"
#include "agent/turn_loop.h"
#include "common/error.h"
#include "prompt/token_estimate.h"

namespace ptxbench {
namespace {

// The fake model: a wrong kernel at turn 1, then one that passes past the target, in the run's
// language, with markers the fake backend reads. Its usage estimates the tokens it saw and wrote.
class DryRunModel final : public Policy {
 public:
  DryRunModel(CandidateLanguage language, double target) : m_language(language), m_target(target) {}
  [[nodiscard]] std::string name() const override { return "dry-run"; }
  PolicyAnswer answer(const PolicyRequest& r) override {
    std::string markers = r.turn <= 1 ? "PTXB_FAKE_STATUS=INCORRECT_NUMERICAL PTXB_FAKE_SECONDS=0"
                                      : fmt::format("PTXB_FAKE_SPEEDUP={:g} PTXB_FAKE_SECONDS=0", m_target * 1.25);
    PolicyAnswer a;
    a.text = m_language == CandidateLanguage::triton
                 ? "A dry-run answer.\n\n```python\n# " + markers + "\ndef run(*args):\n    pass\n```\n"
                 : "A dry-run answer.\n\n```cuda\n#include \"ptxbench_abi.h\"\n// " + markers +
                       "\nextern \"C\" int ptxb_run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) { return 0; }\n```\n";
    std::size_t seen = estimate_tokens(r.system);
    for (const auto& m : r.conversation) seen += estimate_tokens(m.content);
    a.usage.prompt_tokens = static_cast<int64_t>(seen);
    a.usage.completion_tokens = static_cast<int64_t>(estimate_tokens(a.text));
    a.usage.provider = "builtin";
    a.usage.model = "dry-run";
    a.usage.finish_reason = "stop";
    return a;
  }

 private:
  CandidateLanguage m_language;
  double m_target;
};

std::string policy_line(const RunConfig& c) {
  if (c.policy == "model")
    return fmt::format("model {} {} at {} (not called)", to_string(c.model->provider), c.model->model, c.model->base_url);
  if (c.policy == "replay") return "replay of run " + c.replay_run + " in " + c.replay_store + " (not read)";
  return c.policy;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

void dry_run(const RunConfig& c, const std::string& config_name, const AgentRunSetup& setup, std::FILE* out) {
  RunTools tools;
  check_run_config(tools, c, setup.root);
  const Catalog& catalog = *tools.catalog;
  std::vector<TrajectoryKey> keys = trajectory_keys(c, tools.tags);

  fmt::print(out, "Dry run of {}: nothing is stored; no model, network or GPU is used.\n", config_name);
  fmt::print(out, "  policy        {}\n", policy_line(c));
  fmt::print(out, "  evaluation    fake backend in this process (service {} not contacted)\n", c.service);
  fmt::print(out, "  language      {}\n", to_string(c.language));
  std::vector<std::string> defs;
  for (const auto& d : c.definitions) {
    const Workload& w = c.workload.empty() ? catalog.default_workload(d) : catalog.find_workload(d, c.workload);
    if (c.workloads.empty()) {
      defs.push_back(d + " (workload " + w.label(catalog.definition(d)) + ")");
      continue;
    }
    std::vector<std::string> labels;  // a sweep: every turn is evaluated at each of them
    for (const Workload* sw : select_workloads(catalog, d, c.workloads)) labels.push_back(sw->label(catalog.definition(d)));
    defs.push_back(d + " (sweep of " + std::to_string(labels.size()) + " workloads: " + joined(labels) + ")");
  }
  fmt::print(out, "  definitions   {}\n", joined(defs));
  fmt::print(out, "  prompt tags   {}\n", joined(tools.tags));
  auto count = [](std::size_t n, const char* what) { return fmt::format("{} {}{}", n, what, n == 1 ? "" : "s"); };
  std::string shape = c.repair_from ? count(c.repair_from->seeds.size(), "seed") + " × " + count(tools.tags.size(), "tag")
                                    : count(c.definitions.size(), "definition") + " × " + count(tools.tags.size(), "tag") +
                                          " × " + std::to_string(c.trajectories_per_tag) + " per tag";
  fmt::print(out, "  trajectories  {} ({}), up to {} turns each: at most {} model calls and evaluations\n", keys.size(), shape,
             c.num_turns, keys.size() * static_cast<std::size_t>(c.num_turns));
  fmt::print(out, "  stop rule     a turn PASSED with speedup ≥ {:g}×; INFRA_ERROR evaluations re-run up to {} times\n",
             c.target_speedup, c.infra_error_retries);
  fmt::print(out, "  context       {}; concurrency {}, model calls {}\n", to_string(c.context), c.concurrency, c.model_concurrency);
  if (c.repair_notes.enabled())
    fmt::print(out, "  repair notes  {} from {}, k {}\n", to_string(c.repair_notes.mode), c.repair_notes.store, c.repair_notes.k);

  // The first prompt of each (definition, tag): what the model's first call carries before any answer.
  std::set<std::pair<std::string, std::string>> seen;
  bool header = false;
  for (const auto& key : keys) {
    std::string tag = base_prompt_tag(key.prompt_tag);
    if (!seen.insert({key.definition, tag}).second) continue;
    const Definition& def = catalog.definition(key.definition);
    const Workload& w = key.workload_uuid.empty() ? catalog.default_workload(key.definition)
                                                  : catalog.find_workload(key.definition, key.workload_uuid);
    Prompt p = tools.prompts->build(def, resolve_workload(def, w), tag, c.arch);
    std::size_t task = 0;
    for (const auto& comp : p.components)
      if (comp.name == "task") task += comp.tokens;
    if (!header) fmt::print(out, "First prompts (tokens counted by {}):\n", p.token_counter);
    header = true;
    fmt::print(out, "  {:<40} {:>7} tokens (system {}, task {})\n", key.definition + "/" + tag, p.total_tokens(),
               p.total_tokens() - task, task);
  }

  // One trajectory per (definition or seed, tag) through the real loop, on a store in memory.
  RunConfig checked = c;
  checked.concurrency = 1;
  tools.policy = std::make_unique<DryRunModel>(c.language, c.target_speedup);
  tools.evaluation = make_fake_evaluation(catalog);
  RunStore store(":memory:");
  std::string run_id = store.create_run(checked.to_json(), "dry-run", "dry run");
  TrajectoryRunner runner(store, *tools.policy, *tools.evaluation, checked, catalog, *tools.prompts, run_id,
                          tools.notes.get(), &tools.control);
  fmt::print(out, "Checked end to end (fake model, fake evaluation):\n");
  for (const auto& key : keys) {
    if (key.index != 0 && !c.repair_from) continue;
    int64_t id = store.ensure_trajectory(run_id, key);
    runner.run(id);
    TrajectoryInfo t = store.trajectory(id);
    std::string turns;
    for (const auto& r : store.turns(id))
      turns += fmt::format("{}turn {} {}{}", turns.empty() ? "" : ", ", r.turn, r.status,
                           r.speedup ? fmt::format(" ({:g}×)", *r.speedup) : "");
    if (t.status == TrajectoryStatus::failed || t.status == TrajectoryStatus::running)
      throw Error("dry run", trajectory_label(key) + " did not go through the turn loop: " + to_string(t.status) +
                                 (t.stop_reason.empty() ? "" : " (" + t.stop_reason + ")"));
    fmt::print(out, "  {:<42} {}: {}\n", trajectory_label(key), turns, to_string(t.status));
  }
  fmt::print(out, "Nothing was stored. `ptxbench run --config {}` starts the run.\n", config_name);
}

}  // namespace ptxbench
