#include "report/agent_comparison_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

#include "common/error.h"

namespace ptxbench::report {
namespace {

// More resamples than this buy no visible precision and cost minutes on a paper-scale run.
constexpr int64_t kMaxResamples = 100000;

std::string joined(const std::vector<std::string>& v, const std::string& none = "none") {
  if (v.empty()) return none;
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::set<std::pair<std::string, std::string>> option_values(const Provenance& p) {
  std::set<std::pair<std::string, std::string>> s;
  for (const auto& c : p.changed_options) s.insert({c.option, c.value});
  return s;
}

// The model names the stored calls of a run's trajectories record (the zero rows `ptxbench mcp`
// stores without a proxy name the MCP client, not a model, and are left out).
std::vector<std::string> call_models(const Report& r, const RunSummary& run) {
  std::vector<std::string> names;
  for (auto i : run.trajectories)
    for (const auto& rec : r.trajectories[i].records)
      if (rec.usage && !rec.usage->model.empty() && rec.usage->provider != "mcp" &&
          std::find(names.begin(), names.end(), rec.usage->model) == names.end())
        names.push_back(rec.usage->model);
  return names;
}

}  // namespace

void check_comparison_options(const AgentComparisonOptions& o) {
  if (o.requests && *o.requests < 1) throw InputError("report", "--requests: N is >= 1, got " + std::to_string(*o.requests));
  if (o.bootstrap.resamples < 1 || o.bootstrap.resamples > kMaxResamples)
    throw InputError("report", fmt::format("--bootstrap: B is 1 to {}, got {}", kMaxResamples, o.bootstrap.resamples));
  if (!(o.bootstrap.confidence > 0.0 && o.bootstrap.confidence < 1.0))
    throw InputError("report", fmt::format("--confidence: strictly between 0 and 1, got {}", o.bootstrap.confidence));
}

void check_requests(const AgentComparison& c) {
  if (c.requests < 1)
    throw InputError("report", "the agent run " + c.agent.info.id + " states no budget (num_turns) and holds no turn: give --requests N");
  for (const auto* run : {&c.agent, &c.refinement})
    if (run->num_turns < c.requests)
      throw InputError("report", fmt::format("N = {} evaluation requests per trajectory, but the {} run {} allows only {} per "
                                             "trajectory (num_turns): its trajectories were not given N requests, so nothing can "
                                             "be compared at N. Give --requests {} or less",
                                             c.requests, run == &c.agent ? "agent" : "refinement", run->info.id, run->num_turns,
                                             run->num_turns));
}

std::vector<std::string> shared_definitions(const ComparedRun& agent, const ComparedRun& refinement) {
  std::vector<std::string> shared;
  for (const auto& d : agent.definitions)
    if (std::find(refinement.definitions.begin(), refinement.definitions.end(), d) != refinement.definitions.end()) shared.push_back(d);
  if (shared.empty())
    throw InputError("report", fmt::format("the runs share no definition (agent run {}: {}; refinement run {}: {}): nothing to compare",
                                           agent.info.id, joined(agent.definitions), refinement.info.id, joined(refinement.definitions)));
  return shared;
}

std::vector<std::string> comparability_warnings(const Report& r, const AgentComparison& c) {
  std::vector<std::string> w;
  const auto& a = c.agent;
  const auto& b = c.refinement;
  if (run_policy(a.info) != kAgentPolicy)
    w.push_back(fmt::format("the agent side {} is not a run of `ptxbench mcp` (policy '{}', not '{}'): compared as the agent anyway",
                            a.info.id, run_policy(a.info), kAgentPolicy));
  if (run_policy(b.info) == kAgentPolicy)
    w.push_back(fmt::format("the refinement side {} is a run of `ptxbench mcp` (policy '{}'): two agents are compared", b.info.id,
                            kAgentPolicy));
  if (a.num_turns != b.num_turns)
    w.push_back(fmt::format("the budgets differ: the agent run allows {} evaluation requests per trajectory, the refinement run "
                            "{} turns; both are compared at their first N = {}",
                            a.num_turns, b.num_turns, c.requests));
  std::vector<std::string> only_a, only_b;
  for (const auto& d : a.definitions)
    if (std::find(b.definitions.begin(), b.definitions.end(), d) == b.definitions.end()) only_a.push_back(d);
  for (const auto& d : b.definitions)
    if (std::find(a.definitions.begin(), a.definitions.end(), d) == a.definitions.end()) only_b.push_back(d);
  if (!only_a.empty() || !only_b.empty())
    w.push_back(fmt::format("the runs ran different definitions: only the {} both ran are compared (left out: agent only {}; "
                            "refinement only {}), and the pooled row pools those",
                            c.definitions.size(), joined(only_a), joined(only_b)));
  if (a.info.model != b.info.model) {
    auto ma = call_models(r, r.runs[0]), mb = call_models(r, r.runs[1]);
    bool shared = std::any_of(ma.begin(), ma.end(), [&](const std::string& m) { return std::find(mb.begin(), mb.end(), m) != mb.end(); });
    if (!shared)
      w.push_back(fmt::format("the model labels differ (agent '{}', refinement '{}') and the stored model calls name no common "
                              "model (agent: {}; refinement: {}): check that both used the same model",
                              a.info.model, b.info.model, joined(ma), joined(mb)));
  }
  if (!a.gpus.empty() && !b.gpus.empty() && a.gpus != b.gpus)
    w.push_back(fmt::format("the GPUs differ: agent {}; refinement {}", joined(a.gpus), joined(b.gpus)));
  if (a.tags != b.tags)
    w.push_back(fmt::format("the prompt tags differ (the task texts differ with them): agent {}; refinement {}", joined(a.tags, "-"),
                            joined(b.tags, "-")));
  if (option_values(a.provenance) != option_values(b.provenance))
    w.push_back(fmt::format("the evaluation options differ: agent: {}; refinement: {}",
                            a.provenance.options_changed() ? describe_changes(a.provenance) : "defaults",
                            b.provenance.options_changed() ? describe_changes(b.provenance) : "defaults"));
  for (const auto* run : {&a, &b}) {
    const char* side = run == &a ? "agent" : "refinement";
    int64_t total = 0;
    for (const auto& t : run->trajectories) total += t.obs.tokens.total();
    if (total == 0 && !run->trajectories.empty())
      w.push_back(fmt::format("the {} run {} records no prompt or completion tokens through request N ({}): its token medians are 0, "
                              "the token ratio is n/a or 0, and its Figure 14 curve sits left of the axis",
                              side, run->info.id,
                              run->info.imported() ? "an imported run holds reasoning tokens only"
                                                   : "no model proxy recorded the agent's calls"));
    if (run->info.status == RunStatus::running)
      w.push_back(fmt::format("the {} run {} is still running: its trajectories may gain turns", side, run->info.id));
    if (run->provenance.imported())
      w.push_back(fmt::format("the {} run {} is imported ({}): not measured here", side, run->info.id, run->info.origin));
  }
  return w;
}

}  // namespace ptxbench::report
