// Who may use the evaluation service: the access token (its file must be private, a service other
// hosts can reach refuses to start without one, every route answers 401 without it) and the
// clients that send it (ServiceClient, `ptxbench eval --service`, the load driver, the agent), for which a
// 401 is a clear error and never an evaluation verdict.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <optional>
#include <sstream>

#include "agent/agent_run.h"
#include "runs/run_store.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/subprocess.h"
#include "service/access_token.h"
#include "service/local_service.h"
#include "service/service_client.h"
#include "suite/suite_load.h"
#include "verdict/status.h"

using namespace ptxbench;

namespace {

constexpr const char* kToken = "0123456789abcdef0123456789abcdef";
const std::string kHome = std::string("PTXBENCH_HOME=") + PTXBENCH_SOURCE_DIR;

fs::path ptxbench_binary() { return executable_dir() / "ptxbench"; }

/// Sets or unsets an environment variable for one scope (children inherit ours).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : m_name(name) {
    if (const char* old = std::getenv(name)) m_old = old;
    if (value) ::setenv(name, value, 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (m_old) ::setenv(m_name, m_old->c_str(), 1);
    else ::unsetenv(m_name);
  }

 private:
  const char* m_name;
  std::optional<std::string> m_old;
};

ServiceClientOptions with_token(const std::string& token) {
  ServiceClientOptions o;
  o.token = token;
  return o;
}

fs::path write_token(const fs::path& dir, const std::string& name, const std::string& content, mode_t mode) {
  fs::path p = dir / name;
  write_file_atomic(p, content);
  ::chmod(p.c_str(), mode);
  return p;
}

template <typename F>
std::string input_error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

ordered_json submission(const std::string& source) { return {{"definition", "gemm_n7168_k5120"}, {"source", source}}; }

ProcessResult run_ptxbench(std::vector<std::string> args, double timeout_s = 30) {
  ProcessSpec spec;
  spec.argv = {ptxbench_binary().string()};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env_overrides = {kHome};
  return run_process(spec, timeout_s);
}

struct ServiceAccess : ::testing::Test {
  TempDir dir;
  ScopedEnv no_env_token{kTokenEnv, nullptr};
  fs::path db() const { return dir.path() / "queue.db"; }
  fs::path token_file() const { return write_token(dir.path(), "token", std::string(kToken) + "\n", 0600); }
};

}  // namespace

TEST(AccessToken, TheTokenFileMustBePrivateAndHoldAToken) {
  TempDir dir;
  ScopedEnv no_env{kTokenEnv, nullptr};
  EXPECT_EQ(load_access_token(write_token(dir.path(), "ok", std::string("  ") + kToken + "\n", 0600).string()), kToken)
      << "surrounding whitespace is not part of the token";
  EXPECT_EQ(load_access_token(write_token(dir.path(), "owner_only", kToken, 0400).string()), kToken);
  for (mode_t open_mode : {0640, 0604, 0620, 0602}) {
    std::string why = input_error_of([&] { (void)load_access_token(write_token(dir.path(), "shared", kToken, open_mode).string()); });
    EXPECT_NE(why.find("accessible by its group or others"), std::string::npos) << std::oct << open_mode << ": " << why;
    EXPECT_NE(why.find("chmod 600"), std::string::npos) << why;
  }
  EXPECT_NE(input_error_of([&] { (void)load_access_token((dir.path() / "absent").string()); }).find("cannot open token file"),
            std::string::npos);
  EXPECT_NE(input_error_of([&] { (void)load_access_token(write_token(dir.path(), "empty", "\n", 0600).string()); }).find("holds no token"),
            std::string::npos);
  EXPECT_NE(input_error_of([&] { (void)load_access_token(write_token(dir.path(), "short", "abc123", 0600).string()); }).find("fewer than 16"),
            std::string::npos);
  EXPECT_NE(input_error_of([&] { (void)load_access_token(write_token(dir.path(), "spaced", "0123456789 abcdef0123", 0600).string()); })
                .find("visible ASCII"),
            std::string::npos);
  EXPECT_NE(input_error_of([&] { (void)load_access_token(dir.path().string()); }).find("not a regular file"), std::string::npos);

  EXPECT_FALSE(load_access_token("").has_value()) << "no file and no $PTXBENCH_TOKEN: no token";
  {
    ScopedEnv env{kTokenEnv, "fedcba9876543210fedcba9876543210"};
    EXPECT_EQ(load_access_token(""), "fedcba9876543210fedcba9876543210");
    EXPECT_EQ(load_access_token(write_token(dir.path(), "wins", kToken, 0600).string()), kToken) << "the file wins over the environment";
  }
  {
    ScopedEnv env{kTokenEnv, "short"};
    EXPECT_NE(input_error_of([] { (void)load_access_token(""); }).find("$PTXBENCH_TOKEN"), std::string::npos);
  }
}

TEST(AccessToken, OnlyLoopbackAddressesMayGoWithoutAToken) {
  for (const char* host : {"127.0.0.1", "127.1.2.3", "localhost", "::1"}) {
    EXPECT_TRUE(is_loopback_host(host)) << host;
    EXPECT_NO_THROW(require_token_for_listen(host, std::nullopt)) << host;
  }
  for (const char* host : {"0.0.0.0", "10.0.0.5", "128.0.0.1", "192.168.1.1", "localhost.example.com"}) {
    EXPECT_FALSE(is_loopback_host(host)) << host;
    std::string why = input_error_of([&] { require_token_for_listen(host, std::nullopt); });
    EXPECT_NE(why.find("--token-file"), std::string::npos) << why;
    EXPECT_NO_THROW(require_token_for_listen(host, std::string(kToken))) << host;
  }
}

TEST(AccessToken, TheBearerCheckNeedsTheExactToken) {
  const std::string t = kToken;
  EXPECT_EQ(check_bearer("Bearer " + t, t), TokenCheck::ok);
  EXPECT_EQ(check_bearer("bearer " + t, t), TokenCheck::ok) << "the scheme is case-insensitive";
  EXPECT_EQ(check_bearer("BEARER   " + t + " ", t), TokenCheck::ok);
  EXPECT_EQ(check_bearer("", t), TokenCheck::missing);
  EXPECT_EQ(check_bearer("Bearer", t), TokenCheck::missing);
  EXPECT_EQ(check_bearer("Basic " + t, t), TokenCheck::missing);
  EXPECT_EQ(check_bearer(t, t), TokenCheck::missing);
  EXPECT_EQ(check_bearer("Bearer " + t.substr(0, t.size() - 1), t), TokenCheck::wrong) << "a prefix is not the token";
  EXPECT_EQ(check_bearer("Bearer " + t + "0", t), TokenCheck::wrong);
  std::string flipped = t;
  flipped[5] = 'X';
  EXPECT_EQ(check_bearer("Bearer " + flipped, t), TokenCheck::wrong);
}

TEST_F(ServiceAccess, AServiceOtherHostsCanReachRefusesToStartWithoutAToken) {
  ProcessResult bare = run_ptxbench({"serve", "--listen", "0.0.0.0:0", "--fake-gpus", "1", "--db", db().string()});
  EXPECT_EQ(bare.status.exit_code, 2) << bare.status.describe() << " " << bare.err.text;
  EXPECT_NE(bare.err.text.find("error: serve: listening on 0.0.0.0"), std::string::npos) << bare.err.text;
  EXPECT_NE(bare.err.text.find("--token-file"), std::string::npos) << bare.err.text;
  EXPECT_FALSE(fs::exists(db())) << "nothing may start before the exposure check";

  fs::path shared = write_token(dir.path(), "shared", kToken, 0644);
  ProcessResult readable = run_ptxbench({"serve", "--listen", "0.0.0.0:0", "--fake-gpus", "1", "--db", db().string(),
                                         "--token-file", shared.string()});
  EXPECT_EQ(readable.status.exit_code, 2) << readable.err.text;
  EXPECT_NE(readable.err.text.find("chmod 600"), std::string::npos) << readable.err.text;

  // With a private token file, or $PTXBENCH_TOKEN, it starts.
  LocalService with_file(ptxbench_binary(), db(), {"--fake-gpus", "1", "--token-file", token_file().string()}, "0.0.0.0:0",
                         {kHome}, 15);
  std::string port = with_file.url().substr(with_file.url().rfind(':') + 1);
  ServiceClient client("http://127.0.0.1:" + port, with_token(kToken));
  EXPECT_EQ(client.request("GET", "/v1/health").status, 200);
  EXPECT_EQ(ServiceClient("http://127.0.0.1:" + port).request("GET", "/v1/health").status, 401);
}

TEST_F(ServiceAccess, WithATokenEveryRouteAnswers401WithoutIt) {
  LocalService service(ptxbench_binary(), db(), {"--fake-gpus", "1", "--token-file", token_file().string()}, "127.0.0.1:0",
                       {kHome}, 15);
  ServiceClient anonymous(service.url());
  ServiceClient wrong(service.url(), with_token("ffffffffffffffffffffffffffffffff"));
  ServiceClient right(service.url(), with_token(kToken));
  std::string body = submission("// PTXB_FAKE_SECONDS=0.01").dump();
  for (const auto& [method, path] : std::vector<std::pair<std::string, std::string>>{
           {"GET", "/v1/health"}, {"GET", "/metrics"}, {"GET", "/v1/definitions"}, {"POST", "/v1/evaluations"},
           {"GET", "/v1/evaluations/0123456789abcdef0123456789abcdef"}, {"GET", "/no/such/route"}}) {
    HttpResult none = anonymous.request(method, path, method == "POST" ? body : "");
    EXPECT_EQ(none.status, 401) << method << " " << path;
    EXPECT_NE(ordered_json::parse(none.body).value("error", "").find("needs an access token"), std::string::npos) << none.body;
    EXPECT_EQ(none.headers["www-authenticate"], "Bearer realm=\"ptxbench\"");
    HttpResult bad = wrong.request(method, path, method == "POST" ? body : "");
    EXPECT_EQ(bad.status, 401) << method << " " << path;
    EXPECT_EQ(ordered_json::parse(bad.body)["error"], "wrong access token");
  }
  EXPECT_EQ(anonymous.request("GET", "/v1/health", "", 10, {std::string("Authorization: Bearer ") + kToken}).status, 200);
  EXPECT_EQ(right.request("GET", "/v1/health").status, 200);
  EXPECT_EQ(right.request("GET", "/metrics").status, 200);
  EXPECT_EQ(right.request("GET", "/v1/definitions").status, 200);
  EXPECT_EQ(right.request("GET", "/no/such/route").status, 404);
  EXPECT_EQ(right.wait_done(right.submit_body(submission("// PTXB_FAKE_SECONDS=0.01")), 30).task["status"], "PASSED");

  // The client side: a 401 is AccessDenied saying what to do, for every call.
  try {
    anonymous.submit_body(submission("// x"));
    ADD_FAILURE() << "submitted without a token";
  } catch (const AccessDenied& e) {
    EXPECT_NE(std::string(e.what()).find("needs an access token: give --token-file FILE"), std::string::npos) << e.what();
  }
  try {
    wrong.get("0123456789abcdef0123456789abcdef");
    ADD_FAILURE() << "read with a wrong token";
  } catch (const AccessDenied& e) {
    EXPECT_NE(std::string(e.what()).find("refused our access token"), std::string::npos) << e.what();
  }
  EXPECT_THROW(wrong.definitions(), AccessDenied);

  // Refused submissions are in the log too.
  EXPECT_NE(service.log().find(R"("outcome":"unauthorized","status":401)"), std::string::npos) << service.log();
}

// The CLI clients read the token like serve does, and a 401 is an error exit (2), not a verdict.
TEST_F(ServiceAccess, EvalAndTheLoadDriverSendTheToken) {
  LocalService service(ptxbench_binary(), db(), {"--fake-gpus", "1", "--token-file", token_file().string()}, "127.0.0.1:0",
                       {kHome}, 15);
  write_file_atomic(dir.path() / "good.cu", "// PTXB_FAKE_SECONDS=0.01\n");
  std::vector<std::string> eval = {"eval", "gemm_n7168_k5120", (dir.path() / "good.cu").string(), "--service", service.url(), "--json"};

  ProcessResult refused = run_ptxbench(eval);
  EXPECT_EQ(refused.status.exit_code, 2) << refused.err.text;
  EXPECT_NE(refused.err.text.find("needs an access token"), std::string::npos) << refused.err.text;
  EXPECT_TRUE(refused.out.text.empty()) << "no verdict may be printed: " << refused.out.text;

  std::vector<std::string> with_file = eval;
  with_file.insert(with_file.end(), {"--token-file", token_file().string()});
  ProcessResult ok = run_ptxbench(with_file);
  ASSERT_TRUE(ok.status.success()) << ok.err.text;
  EXPECT_EQ(ordered_json::parse(ok.out.text)["status"], "PASSED");
  {
    ScopedEnv env{kTokenEnv, kToken};
    ProcessResult from_env = run_ptxbench(eval);
    ASSERT_TRUE(from_env.status.success()) << from_env.err.text;
    ScopedEnv wrong{kTokenEnv, "ffffffffffffffffffffffffffffffff"};
    ProcessResult wrong_env = run_ptxbench(eval);
    EXPECT_EQ(wrong_env.status.exit_code, 2);
    EXPECT_NE(wrong_env.err.text.find("refused our access token"), std::string::npos) << wrong_env.err.text;
  }
  std::vector<std::string> loose_file = eval;
  loose_file.insert(loose_file.end(), {"--token-file", write_token(dir.path(), "loose", kToken, 0644).string()});
  ProcessResult loose = run_ptxbench(loose_file);
  EXPECT_EQ(loose.status.exit_code, 2);
  EXPECT_NE(loose.err.text.find("chmod 600"), std::string::npos) << loose.err.text;

  // The load driver: no token is an InputError naming the cause; with it, verdicts come back.
  LoadCase c;
  c.definition = "gemm_n7168_k5120";
  c.c.name = "pass";
  c.c.source = "// PTXB_FAKE_SECONDS=0.01";
  c.c.expect.status = Status::PASSED;
  LoadOptions o;
  o.service = service.url();
  o.count = 2;
  o.clients = 2;
  try {
    run_load({c}, o);
    ADD_FAILURE() << "the load ran without a token";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("needs an access token"), std::string::npos) << e.what();
  }
  o.client.token = kToken;
  EXPECT_TRUE(run_load({c}, o).all_as_expected());
}

// The agent reads the token file its run config names; without a token the run stops before
// any trajectory starts, and the stored config holds the path, never the token.
TEST_F(ServiceAccess, TheAgentSendsTheTokenItsRunConfigNames) {
  LocalService service(ptxbench_binary(), db(), {"--fake-gpus", "1", "--token-file", token_file().string()}, "127.0.0.1:0",
                       {kHome}, 15);
  AgentRunSetup setup;
  setup.root = PTXBENCH_SOURCE_DIR;
  setup.store = (dir.path() / "runs" / "runs.db").string();
  setup.runs_dir = dir.path() / "runs";
  setup.ptxbench = ptxbench_binary();
  ordered_json cfg = {{"policy", "expert"}, {"definitions", {"gemm_n7168_k5120"}}, {"prompt_tags", {"params"}},
                      {"trajectories_per_tag", 1}, {"num_turns", 1}, {"service", service.url()}};
  try {
    start_run(run_config_from_json(cfg), setup);
    ADD_FAILURE() << "the run started without a token";
  } catch (const AccessDenied& e) {
    EXPECT_NE(std::string(e.what()).find("needs an access token"), std::string::npos) << e.what();
  }
  cfg["service_token_file"] = token_file().string();
  AgentRunResult r = start_run(run_config_from_json(cfg), setup);
  ASSERT_TRUE(r.complete());
  RunStore store(setup.store, RunStore::Open::existing);
  EXPECT_EQ(store.turns(store.list_trajectories(r.run_id).at(0).id).at(0).status, "PASSED");
  ordered_json stored = store.run_config(r.run_id);
  EXPECT_EQ(stored["service_token_file"], token_file().string());
  EXPECT_EQ(stored.dump().find(kToken), std::string::npos) << "the token itself is never stored";

  cfg["service_token_file"] = "";
  EXPECT_NE(input_error_of([&] { (void)run_config_from_json(cfg); }).find("service_token_file"), std::string::npos);
}
