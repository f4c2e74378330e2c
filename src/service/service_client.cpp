#include "service/service_client.h"


#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <set>
#include <thread>

#include "service/access_token.h"
#include "verdict/verdict.h"
#include "service/service_api.h"

namespace ptxbench {
namespace {

constexpr double kMaxRetryAfterS = 60;

std::size_t collect(char* data, std::size_t size, std::size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

// One header line of the response; a status line ("HTTP/1.1 100 Continue", then the final one)
// starts the headers afresh.
std::size_t collect_header(char* data, std::size_t size, std::size_t n, void* out) {
  auto& headers = *static_cast<std::map<std::string, std::string>*>(out);
  std::string line(data, size * n);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  if (line.rfind("HTTP/", 0) == 0) {
    headers.clear();
  } else if (auto colon = line.find(':'); colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    headers[name] = value;
  }
  return size * n;
}

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string error_message(const HttpResult& r) {
  try {
    return ordered_json::parse(r.body).value("error", r.body);
  } catch (const std::exception&) {
    return r.body;
  }
}

/// Seconds the service asked us to wait (Retry-After in seconds), or nullopt without a usable one.
std::optional<double> retry_after(const HttpResult& r) {
  auto it = r.headers.find("retry-after");
  if (it == r.headers.end()) return std::nullopt;
  char* end = nullptr;
  double s = std::strtod(it->second.c_str(), &end);
  if (end == it->second.c_str() || s < 0) return std::nullopt;
  return std::clamp(s, 0.05, kMaxRetryAfterS);
}

}  // namespace

ServiceClientOptions service_client_options(const std::string& token_file) {
  ServiceClientOptions o;
  o.token = load_access_token(token_file);
  if (const char* name = std::getenv("PTXBENCH_CLIENT")) o.client_name = name;
  return o;
}

ServiceClient::ServiceClient(std::string base_url, ServiceClientOptions options)
    : m_base(std::move(base_url)), m_options(std::move(options)) {
  while (!m_base.empty() && m_base.back() == '/') m_base.pop_back();
  global_init();
}

HttpResult ServiceClient::request(const std::string& method, const std::string& path, const std::string& body,
                                  double timeout_s, const std::vector<std::string>& extra_headers) const {
  CURL* curl = curl_easy_init();
  if (!curl) throw Error("service client", "curl_easy_init failed");
  HttpResult r;
  std::string url = m_base + path;
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  if (m_options.token) headers = curl_slist_append(headers, ("Authorization: Bearer " + *m_options.token).c_str());
  if (!m_options.client_name.empty())
    headers = curl_slist_append(headers, (std::string(kClientHeader) + ": " + m_options.client_name).c_str());
  for (const auto& h : extra_headers) headers = curl_slist_append(headers, h.c_str());
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  if (method == "POST" || !body.empty()) {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  }
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &r.body);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, collect_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &r.headers);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_s * 1000));
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  CURLcode rc = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r.status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  if (rc != CURLE_OK)
    throw ServiceUnreachable("service client", "cannot reach the evaluation service at " + m_base + " (" + method + " " + path +
                                                   ": " + curl_easy_strerror(rc) + ")");
  return r;
}

void ServiceClient::check_access(const HttpResult& r) const {
  if (r.status != 401) return;
  if (!m_options.token)
    throw AccessDenied("service", "the service at " + m_base +
                                      " needs an access token: give --token-file FILE (mode 600) or set $" + kTokenEnv);
  throw AccessDenied("service", "the service at " + m_base + " refused our access token (" + error_message(r) +
                                    "): check --token-file or $" + kTokenEnv);
}

std::string ServiceClient::submit(const EvalRequest& request, const std::string& idempotency_key) const {
  return submit_body(request.to_json(), idempotency_key);
}

std::string ServiceClient::submit_body(const ordered_json& body, const std::string& idempotency_key) const {
  std::vector<std::string> headers;
  if (!idempotency_key.empty()) headers.push_back("Idempotency-Key: " + idempotency_key);
  auto give_up = std::chrono::steady_clock::now() + std::chrono::duration<double>(m_options.busy_wait_s);
  for (;;) {
    HttpResult r = request("POST", "/v1/evaluations", body.dump(), 90, headers);
    check_access(r);
    // Over the quota or a full queue: back-pressure, not a failure. Wait as told, then resend
    // (with the same idempotency key, so a lost answer still makes no twin).
    if (auto wait = retry_after(r); wait && (r.status == 429 || r.status == 503)) {
      if (std::chrono::steady_clock::now() + std::chrono::duration<double>(*wait) > give_up)
        throw ServiceBusy("service", "still busy after " + std::to_string(static_cast<int>(m_options.busy_wait_s)) +
                                         " s (" + std::to_string(r.status) + "): " + error_message(r));
      std::this_thread::sleep_for(std::chrono::duration<double>(*wait));
      continue;
    }
    if (r.status >= 400 && r.status < 500) throw InputError("service", "rejected (" + std::to_string(r.status) + "): " + error_message(r));
    if (r.status != 202 && r.status != 200)
      throw ServiceUnreachable("service", "the evaluation service at " + m_base + " answered the submission with " +
                                              std::to_string(r.status) + ": " + error_message(r));
    return ordered_json::parse(r.body).at("id").get<std::string>();
  }
}

ordered_json ServiceClient::get(const std::string& id, double wait_s) const {
  HttpResult r = request("GET", "/v1/evaluations/" + id + (wait_s > 0 ? "?wait=" + std::to_string(wait_s) : ""), "", wait_s + 30);
  check_access(r);
  if (r.status >= 500)
    throw ServiceUnreachable("service", "the evaluation service at " + m_base + " answered GET " + id + " with " +
                                            std::to_string(r.status) + ": " + error_message(r));
  if (r.status != 200) throw Error("service", "GET " + id + " answered " + std::to_string(r.status) + ": " + error_message(r));
  return ordered_json::parse(r.body);
}

FinishedEvaluation ServiceClient::wait_done(const std::string& id, double timeout_s) const {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) throw Error("service", "evaluation " + id + " not done within " + std::to_string(timeout_s) + " s");
    ordered_json t = get(id, std::min(left, 30.0));
    if (t.value("state", "") == "done") return read_finished_task(t);
  }
}

bool ServiceClient::forgot(const std::string& id) const {
  return request("GET", "/v1/evaluations/" + id, "", 30).status == 404;
}

FinishedEvaluation read_finished_task(const ordered_json& task) {
  FinishedEvaluation f;
  f.id = task.value("id", "");
  f.task = task;
  f.status = parse_status(task.value("status", "INFRA_ERROR")).value_or(Status::INFRA_ERROR);
  if (!task.contains("verdict") || !task["verdict"].is_object()) {
    f.problem = "the evaluation service returned no verdict";
    return f;
  }
  try {
    f.verdict = Verdict::from_json(task["verdict"]);
    f.status = f.verdict->status;
  } catch (const InputError& e) {
    // Ours, not the kernel's: INFRA_ERROR, and the candidate is evaluated again.
    f.status = Status::INFRA_ERROR;
    f.problem = std::string("the evaluation service's verdict is unreadable: ") + e.what();
  }
  return f;
}

Verdict FinishedEvaluation::verdict_or_bare() const {
  if (verdict) return *verdict;
  Verdict bare;
  bare.status = status;
  bare.message = problem;
  return bare;
}

void ServiceClient::require_definitions(const std::vector<std::string>& wanted, const std::string& who) const {
  ordered_json defs;
  try {
    defs = definitions();
  } catch (const AccessDenied&) {
    throw;
  } catch (const ServiceUnreachable&) {
    throw;  // names the service already
  } catch (const Error& e) {
    throw EnvironmentError(who, "the evaluation service at " + m_base + " cannot be used: " + e.what());
  }
  std::set<std::string> served;
  for (const auto& d : defs) served.insert(d.value("name", ""));
  for (const auto& d : wanted)
    if (!served.count(d)) throw EnvironmentError(who, "the evaluation service at " + m_base + " does not know definition " + d);
}

ordered_json ServiceClient::definitions() const {
  HttpResult r = request("GET", "/v1/definitions", "", 30);
  check_access(r);
  if (r.status != 200) throw Error("service", "GET /v1/definitions answered " + std::to_string(r.status) + ": " + error_message(r));
  return ordered_json::parse(r.body);
}

}  // namespace ptxbench
