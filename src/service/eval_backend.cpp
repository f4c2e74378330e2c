#include "service/eval_backend.h"

#include <chrono>
#include <cstdlib>
#include <thread>

#include "verdict/verdict.h"

namespace ptxbench {
namespace {
std::string marker(const std::string& source, const std::string& key) {
  auto pos = source.find(key + "=");
  if (pos == std::string::npos) return "";
  pos += key.size() + 1;
  auto end = source.find_first_of(" \t\r\n*/;", pos);
  return source.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
}
}  // namespace

ordered_json FakeEvalBackend::evaluate(const EvalRequest& r) {
  if (r.source.find("PTXB_FAKE_CRASH") != std::string::npos) std::abort();
  if (r.source.find("PTXB_FAKE_HANG") != std::string::npos)
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
  std::string status = marker(r.source, "PTXB_FAKE_STATUS");
  std::string seconds = marker(r.source, "PTXB_FAKE_SECONDS");
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds.empty() ? 0.05 : std::stod(seconds)));
  Verdict v;
  v.status = parse_status(status.empty() ? "PASSED" : status).value_or(Status::INFRA_ERROR);
  v.message = "fake evaluation on device " + std::to_string(m_device) + " (no GPU used)";
  v.definition = r.definition;
  v.workload_label = r.workload;
  v.started_at = utc_now_iso8601();
  ordered_json doc = v.to_json();
  doc["fake"] = true;
  return doc;
}

}  // namespace ptxbench
