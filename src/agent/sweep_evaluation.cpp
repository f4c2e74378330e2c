#include "agent/sweep_evaluation.h"

#include <fmt/format.h>

#include <chrono>

#include "common/error.h"
#include "service/service_client.h"
#include "verdict/sweep_verdict.h"

namespace ptxbench {
namespace {

struct SweepTask {
  std::string definition;
  std::vector<std::string> tasks;  ///< one per workload, in sweep order
};

std::optional<SweepTask> parse_sweep_task(const std::string& id) {
  const std::string prefix = kSweepTaskPrefix;
  if (id.rfind(prefix, 0) != 0) return std::nullopt;
  std::size_t colon = id.find(':', prefix.size());
  if (colon == std::string::npos) return std::nullopt;
  SweepTask t{id.substr(prefix.size(), colon - prefix.size()), {}};
  for (std::size_t from = colon + 1;;) {
    std::size_t comma = id.find(',', from);
    t.tasks.push_back(id.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  return t;
}

class SweepEvaluation final : public EvaluationClient {
 public:
  SweepEvaluation(EvaluationClient& inner, const Catalog& catalog, WorkloadSelection selection)
      : m_inner(inner), m_catalog(catalog), m_selection(std::move(selection)) {}

  std::string submit(const EvalRequest& request, const std::string& key) override {
    std::string id = kSweepTaskPrefix + request.definition + ":";
    std::vector<const Workload*> workloads = select_workloads(m_catalog, request.definition, m_selection);
    for (std::size_t i = 0; i < workloads.size(); ++i) {
      EvalRequest one = request;
      one.workload = workloads[i]->uuid;
      std::string task = m_inner.submit(one, key.empty() ? key : key + ":w" + std::to_string(i));
      if (task.empty() || task.find(',') != std::string::npos)
        throw Error("sweep evaluation", "the evaluation service returned task id '" + task + "', which a sweep cannot list");
      id += (i ? "," : "") + task;
    }
    return id;
  }

  FinishedEvaluation wait_done(const std::string& id, double timeout_s) override {
    SweepTask t = parse(id);
    const Definition& def = m_catalog.definition(t.definition);
    std::vector<const Workload*> workloads = select_workloads(m_catalog, t.definition, m_selection);
    if (workloads.size() != t.tasks.size())
      throw Error("sweep evaluation", fmt::format("task {} lists {} evaluations; the run's sweep has {} workloads", id,
                                                  t.tasks.size(), workloads.size()));
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    std::vector<SweepEntry> entries;
    for (std::size_t i = 0; i < workloads.size(); ++i) {
      double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0)
        throw Error("sweep evaluation", fmt::format("sweep {} not done within {} s", id, timeout_s));
      // A workload without a readable verdict counts as its INFRA_ERROR: ours, evaluated again
      // with the sweep.
      entries.push_back(sweep_entry(def, *workloads[i], m_inner.wait_done(t.tasks[i], left).verdict_or_bare()));
    }
    FinishedEvaluation done;
    done.id = id;
    done.verdict = aggregate_sweep(def.name, std::move(entries)).aggregate_verdict();
    done.status = done.verdict->status;
    done.task = {{"id", id}, {"state", "done"}, {"status", to_string(done.status)}};
    return done;
  }

  bool forgot(const std::string& id) override {
    std::optional<SweepTask> t = parse_sweep_task(id);
    if (!t) return m_inner.forgot(id);
    for (const auto& task : t->tasks)
      if (m_inner.forgot(task)) return true;
    return false;
  }

  [[nodiscard]] bool fake() const override { return m_inner.fake(); }

 private:
  static SweepTask parse(const std::string& id) {
    std::optional<SweepTask> t = parse_sweep_task(id);
    if (!t) throw Error("sweep evaluation", "task '" + id + "' is not a workload sweep's");
    return *t;
  }

  EvaluationClient& m_inner;
  const Catalog& m_catalog;
  const WorkloadSelection m_selection;
};

}  // namespace

std::unique_ptr<EvaluationClient> make_sweep_evaluation(EvaluationClient& inner, const Catalog& catalog,
                                                        WorkloadSelection selection) {
  return std::make_unique<SweepEvaluation>(inner, catalog, std::move(selection));
}

std::string sweep_task_note(const Definition& def, const std::vector<const Workload*>& workloads) {
  std::string labels;
  for (const Workload* w : workloads) labels += (labels.empty() ? "" : ", ") + w->label(def);
  return fmt::format("\n\nYour kernel is evaluated at each of these {} workloads of {}, the same source for all: {}. "
                     "The sizes of each workload arrive in the tensors' shapes. The kernel counts as correct only "
                     "when it is correct at every workload, and its speedup is the geometric mean of its speedups "
                     "at them.\n",
                     workloads.size(), def.name, labels);
}

}  // namespace ptxbench
