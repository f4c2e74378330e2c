#include "service/service_client.h"

#include <curl/curl.h>

#include <chrono>
#include <mutex>

#include "common/error.h"

namespace ptxbench {
namespace {

std::size_t collect(char* data, std::size_t size, std::size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
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

}  // namespace

ServiceClient::ServiceClient(std::string base_url) : m_base(std::move(base_url)) {
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
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_s * 1000));
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  CURLcode rc = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r.status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  if (rc != CURLE_OK) throw Error("service client", method + " " + url + ": " + curl_easy_strerror(rc));
  return r;
}

std::string ServiceClient::submit(const ordered_json& body, const std::string& idempotency_key) const {
  std::vector<std::string> headers;
  if (!idempotency_key.empty()) headers.push_back("Idempotency-Key: " + idempotency_key);
  HttpResult r = request("POST", "/v1/evaluations", body.dump(), 90, headers);
  if (r.status >= 400 && r.status < 500) throw InputError("service", "rejected (" + std::to_string(r.status) + "): " + error_message(r));
  if (r.status != 202 && r.status != 200) throw Error("service", "submit answered " + std::to_string(r.status) + ": " + error_message(r));
  return ordered_json::parse(r.body).at("id").get<std::string>();
}

ordered_json ServiceClient::get(const std::string& id, double wait_s) const {
  HttpResult r = request("GET", "/v1/evaluations/" + id + (wait_s > 0 ? "?wait=" + std::to_string(wait_s) : ""), "", wait_s + 30);
  if (r.status != 200) throw Error("service", "GET " + id + " answered " + std::to_string(r.status) + ": " + error_message(r));
  return ordered_json::parse(r.body);
}

ordered_json ServiceClient::wait_done(const std::string& id, double timeout_s) const {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) throw Error("service", "evaluation " + id + " not done within " + std::to_string(timeout_s) + " s");
    ordered_json t = get(id, std::min(left, 30.0));
    if (t.value("state", "") == "done") return t;
  }
}

}  // namespace ptxbench
