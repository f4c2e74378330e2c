#include "agent/evaluation_client.h"

#include <map>
#include <mutex>

#include "common/error.h"
#include "service/eval_backend.h"
#include "service/eval_request.h"
#include "verdict/verdict.h"

namespace ptxbench {
namespace {

class ServiceEvaluation final : public EvaluationClient {
 public:
  ServiceEvaluation(const ServiceClient& service, bool fake) : m_service(service), m_fake(fake) {}
  std::string submit(const EvalRequest& request, const std::string& key) override { return m_service.submit(request, key); }
  FinishedEvaluation wait_done(const std::string& id, double timeout_s) override { return m_service.wait_done(id, timeout_s); }
  bool forgot(const std::string& id) override { return m_service.forgot(id); }
  [[nodiscard]] bool fake() const override { return m_fake; }

 private:
  const ServiceClient& m_service;
  bool m_fake;
};

// Evaluates at submit time: the task is done before its id is returned, as a service that is
// never busy would have it.
class InProcessFakeEvaluation final : public EvaluationClient {
 public:
  explicit InProcessFakeEvaluation(const Catalog& catalog) : m_catalog(catalog), m_backend(0) {}
  std::string submit(const EvalRequest& request, const std::string& key) override {
    std::lock_guard lock(m_mutex);
    if (auto it = m_by_key.find(key); !key.empty() && it != m_by_key.end()) return it->second;
    // Checked as the service checks what it receives.
    EvalRequest checked = parse_eval_request(request.to_json().dump(), m_catalog, EvalRequestLimits{}, "evaluation request");
    Verdict v = m_backend.evaluate(checked);
    std::string id = "dry-" + std::to_string(m_tasks.size() + 1);
    FinishedEvaluation& done = m_tasks[id];
    done.id = id;
    done.status = v.status;
    done.task = {{"id", id}, {"state", "done"}, {"status", to_string(v.status)}};
    done.verdict = std::move(v);
    if (!key.empty()) m_by_key[key] = id;
    return id;
  }
  FinishedEvaluation wait_done(const std::string& id, double) override {
    std::lock_guard lock(m_mutex);
    auto it = m_tasks.find(id);
    if (it == m_tasks.end()) throw Error("fake evaluation", "no task " + id);
    return it->second;
  }
  bool forgot(const std::string& id) override {
    std::lock_guard lock(m_mutex);
    return m_tasks.count(id) == 0;
  }
  [[nodiscard]] bool fake() const override { return true; }

 private:
  const Catalog& m_catalog;
  std::mutex m_mutex;
  FakeEvalBackend m_backend;
  std::map<std::string, FinishedEvaluation> m_tasks;
  std::map<std::string, std::string> m_by_key;
};

}  // namespace

std::unique_ptr<EvaluationClient> make_service_evaluation(const ServiceClient& service, bool fake) {
  return std::make_unique<ServiceEvaluation>(service, fake);
}

std::unique_ptr<EvaluationClient> make_fake_evaluation(const Catalog& catalog) {
  return std::make_unique<InProcessFakeEvaluation>(catalog);
}

}  // namespace ptxbench
