// The MCP server in-process, driven with JSON lines: the JSON-RPC framing and its error codes, the
// lifecycle and version negotiation, the tool schemas, every tool, bad arguments as tool errors,
// the budget refusal, the turns stored in the run store with their verdicts, a restarted session
// counting on from the stored turns, an interrupted evaluation collected later, and the stdio loop
// over pipes (ping and cancellation while an evaluation runs, end of input ending the trajectory).
// Evaluations go to a real `ptxbench serve --fake-gpus`, whose verdicts follow markers in the source.
#include <gtest/gtest.h>
#include <unistd.h>

#include <memory>
#include <thread>

#include "runs/run_store.h"
#include "common/cuda_tools.h"
#include "common/fs.h"
#include "mcp/json_rpc.h"
#include "mcp/mcp_server.h"
#include "mcp/trajectory_session.h"
#include "service/local_service.h"
#include "service/service_client.h"
#include "verdict/feedback.h"

using namespace ptxbench;
using namespace ptxbench::mcp;

namespace {

constexpr const char* kDefinition = "gemm_n7168_k5120";

/// A candidate whose fake verdict is `markers` (PTXB_FAKE_STATUS=..., PTXB_FAKE_SPEEDUP=...).
std::string kernel(const std::string& markers) {
  return "#include \"ptxbench_abi.h\"\n// " + markers +
         "\nextern \"C\" int ptxb_run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) { return 0; }\n";
}

std::string request(int id, const std::string& method, const ordered_json& params = ordered_json::object()) {
  return ordered_json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}}.dump();
}

std::string call_line(int id, const std::string& tool, const ordered_json& args) {
  return request(id, "tools/call", {{"name", tool}, {"arguments", args}});
}

const std::string kInitialize = request(1, "initialize", {{"protocolVersion", "2025-11-25"},
                                                          {"capabilities", ordered_json::object()},
                                                          {"clientInfo", {{"name", "gtest"}, {"version", "1"}}}});

std::string text_of(const ordered_json& response) { return response["result"]["content"][0]["text"].get<std::string>(); }

bool contains(const std::string& haystack, const std::string& needle) { return haystack.find(needle) != std::string::npos; }

/// One `ptxbench serve --fake-gpus 1` for the whole suite (starting one takes a moment).
class FakeService {
 public:
  static FakeService& get() {
    static FakeService s;
    return s;
  }
  [[nodiscard]] const std::string& url() const { return m_service->url(); }

 private:
  FakeService()
      : m_dir("ptxbench-mcp-service"),
        m_service(std::make_unique<LocalService>(executable_dir() / "ptxbench", m_dir.path() / "service.db",
                                                 std::vector<std::string>{"--fake-gpus", "1"})) {}
  TempDir m_dir;
  std::unique_ptr<LocalService> m_service;
};

class McpTest : public ::testing::Test {
 protected:
  McpTest()
      : m_catalog(Catalog::load(data_root())),
        m_prompts(data_root()),
        m_service(FakeService::get().url()),
        m_store((m_dir.path() / "runs.db").string()) {}

  SessionConfig config(int budget = 3) const {
    SessionConfig c;
    c.definition = kDefinition;
    c.budget = budget;
    c.service = m_service.base_url();
    c.progress_interval_s = 0.2;
    c.log = [](const std::string&) {};
    return c;
  }
  std::unique_ptr<TrajectorySession> session(const SessionConfig& c) {
    return std::make_unique<TrajectorySession>(m_store, m_service, m_catalog, m_prompts, c);
  }
  std::unique_ptr<McpServer> server(TrajectorySession& s) {
    ServerOptions o;
    o.compile.cache_dir = m_dir.path() / "compile-cache";
    o.log = [](const std::string&) {};
    return std::make_unique<McpServer>(m_catalog, m_prompts, s, o);
  }
  /// A server past initialize and notifications/initialized.
  std::unique_ptr<McpServer> ready_server(TrajectorySession& s) {
    auto srv = server(s);
    auto init = srv->handle_line(kInitialize);
    EXPECT_TRUE(init && init->contains("result")) << (init ? init->dump() : "no answer");
    EXPECT_FALSE(srv->handle_line(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"));
    return srv;
  }
  ordered_json call(McpServer& srv, const std::string& tool, const ordered_json& args, int id = 7) {
    auto r = srv.handle_line(call_line(id, tool, args));
    EXPECT_TRUE(r.has_value());
    return r.value_or(ordered_json());
  }

  TempDir m_dir{"ptxbench-mcp-test"};
  Catalog m_catalog;
  PromptBuilder m_prompts;
  ServiceClient m_service;
  RunStore m_store;
};

}  // namespace

// ---------------------------------------------------------------------------------------- JSON-RPC

TEST(JsonRpc, ReadsRequestsNotificationsAndResponses) {
  ParsedLine r = parse_line(R"({"jsonrpc":"2.0","id":"a1","method":"tools/list"})");
  ASSERT_TRUE(r.message);
  EXPECT_EQ(r.message->kind, MessageKind::request);
  EXPECT_EQ(r.message->id, "a1");
  EXPECT_TRUE(r.message->params.is_object() && r.message->params.empty()) << "absent params read as {}";
  ParsedLine n = parse_line("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\r");
  ASSERT_TRUE(n.message) << "a trailing CR is ignored";
  EXPECT_EQ(n.message->kind, MessageKind::notification);
  ParsedLine resp = parse_line(R"({"jsonrpc":"2.0","id":5,"result":{}})");
  ASSERT_TRUE(resp.message);
  EXPECT_EQ(resp.message->kind, MessageKind::response);
}

TEST(JsonRpc, MalformedMessagesGetTheStandardCodes) {
  auto code = [](std::string_view line) {
    ParsedLine p = parse_line(line);
    EXPECT_FALSE(p.message) << line;
    return p.error_response.is_null() ? 0 : p.error_response["error"]["code"].get<int>();
  };
  auto id = [](std::string_view line) { return parse_line(line).error_response["id"]; };
  EXPECT_EQ(code("{not json"), kParseError);
  EXPECT_TRUE(id("{not json").is_null());
  EXPECT_EQ(code("\"\xff\xfe\""), kParseError) << "invalid UTF-8";
  EXPECT_EQ(code(R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])"), kInvalidRequest) << "no batches in 2025-11-25";
  EXPECT_EQ(code("42"), kInvalidRequest);
  EXPECT_EQ(code(R"({"jsonrpc":"1.0","id":3,"method":"ping"})"), kInvalidRequest);
  EXPECT_EQ(id(R"({"jsonrpc":"1.0","id":3,"method":"ping"})"), 3) << "a readable id is echoed";
  EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":null,"method":"ping"})"), kInvalidRequest) << "MCP ids are never null";
  EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})"), kInvalidRequest);
  EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":4,"method":7})"), kInvalidRequest);
  EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":9})"), kInvalidRequest) << "neither a request nor a response";
  EXPECT_EQ(id(R"({"jsonrpc":"2.0","id":9})"), 9);
  EXPECT_EQ(code(R"({"foo":"boo"})"), kInvalidRequest);
  EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":4,"method":"ping","params":[1]})"), kInvalidParams);
  // A notification is never answered, not even when malformed.
  EXPECT_EQ(code(R"({"jsonrpc":"2.0","method":"x","params":[1]})"), 0);
  EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":4,"result":1,"error":{}})"), 0) << "a malformed response is dropped";
}

TEST(JsonRpc, OneMessageIsOneLine) {
  ordered_json m = make_response(1, {{"text", "two\nlines\tand \x01 control"}, {"bytes", std::string("bad \xff utf8")}});
  std::string line = to_line(m);
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  ordered_json back = ordered_json::parse(line);
  EXPECT_EQ(back["result"]["text"], "two\nlines\tand \x01 control");
  EXPECT_EQ(back["result"]["bytes"], "bad \xEF\xBF\xBD utf8") << "invalid UTF-8 is replaced, not refused";
  ordered_json e = make_error(nullptr, kMethodNotFound, "Method not found: x");
  EXPECT_EQ(e.dump(), R"({"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"Method not found: x"}})");
}

TEST(JsonRpc, LineReaderSplitsLinesAndSkipsOversizedOnes) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::string input = "one\r\n" + std::string(100, 'x') + "\ntwo\n\nlast";
  ASSERT_EQ(::write(fds[1], input.data(), input.size()), static_cast<ssize_t>(input.size()));
  ::close(fds[1]);
  LineReader reader(fds[0], 50);
  EXPECT_EQ(reader.next()->text, "one\r");
  auto big = reader.next();
  EXPECT_TRUE(big->too_long);
  EXPECT_TRUE(big->text.empty());
  EXPECT_EQ(reader.next()->text, "two");
  EXPECT_EQ(reader.next()->text, "");
  EXPECT_EQ(reader.next()->text, "last") << "a last line without a newline still counts";
  EXPECT_FALSE(reader.next());
  ::close(fds[0]);
}

// ---------------------------------------------------------------------------------------- lifecycle

TEST_F(McpTest, InitializeNegotiatesTheProtocolVersion) {
  auto s = session(config());
  auto srv = server(*s);
  auto early = srv->handle_line(request(1, "tools/list"));
  ASSERT_TRUE(early);
  EXPECT_EQ((*early)["error"]["code"], kInvalidRequest) << "tools before initialize";
  auto ping = srv->handle_line(request(2, "ping"));
  EXPECT_EQ((*ping)["result"], ordered_json::object()) << "ping is allowed at any time";
  auto bad = srv->handle_line(request(3, "initialize", {{"capabilities", ordered_json::object()}}));
  EXPECT_EQ((*bad)["error"]["code"], kInvalidParams) << "no protocolVersion";

  auto init = srv->handle_line(request(4, "initialize", {{"protocolVersion", "2025-06-18"},
                                                         {"capabilities", ordered_json::object()},
                                                         {"clientInfo", {{"name", "c"}, {"version", "1"}}}}));
  ASSERT_TRUE(init);
  const ordered_json& r = (*init)["result"];
  EXPECT_EQ((*init)["id"], 4);
  EXPECT_EQ(r["protocolVersion"], "2025-06-18") << "a supported version is answered as asked";
  EXPECT_EQ(r["capabilities"], (ordered_json{{"tools", {{"listChanged", false}}}}));
  EXPECT_EQ(r["serverInfo"]["name"], "ptxbench");
  EXPECT_TRUE(r["serverInfo"]["version"].is_string());
  EXPECT_TRUE(contains(r["instructions"].get<std::string>(), kDefinition));
  auto again = srv->handle_line(kInitialize);
  EXPECT_EQ((*again)["error"]["code"], kInvalidRequest) << "initialize twice";

  auto other = server(*s);
  auto unknown = other->handle_line(request(1, "initialize", {{"protocolVersion", "1999-01-01"}}));
  EXPECT_EQ((*unknown)["result"]["protocolVersion"], kProtocolVersion) << "an unknown version gets ours";
  EXPECT_EQ(supported_protocol_versions().front(), kProtocolVersion);
}

TEST_F(McpTest, UnknownMethodsAndToolsAreProtocolErrors) {
  auto s = session(config());
  auto srv = ready_server(*s);
  EXPECT_EQ((*srv->handle_line(request(2, "resources/list")))["error"]["code"], kMethodNotFound);
  auto unknown = srv->handle_line(call_line(3, "format_disk", ordered_json::object()));
  EXPECT_EQ((*unknown)["error"]["code"], kInvalidParams);
  EXPECT_TRUE(contains((*unknown)["error"]["message"], "Unknown tool: format_disk"));
  EXPECT_EQ((*srv->handle_line(request(4, "tools/call", {{"arguments", ordered_json::object()}})))["error"]["code"],
            kInvalidParams)
      << "no tool name";
  EXPECT_EQ((*srv->handle_line(request(5, "tools/call", {{"name", "compile"}, {"arguments", {1, 2}}})))["error"]["code"],
            kInvalidParams)
      << "arguments that are not an object fail the request's own schema";
  EXPECT_EQ((*srv->handle_line(request(6, "tools/list", {{"cursor", "x"}})))["error"]["code"], kInvalidParams);
  EXPECT_EQ((*srv->handle_line("{oops"))["error"]["code"], kParseError);
  EXPECT_FALSE(srv->handle_line(R"({"jsonrpc":"2.0","method":"notifications/whatever"})"));
}

TEST_F(McpTest, ToolsListPublishesStrictJsonSchemas) {
  auto s = session(config(5));
  auto srv = ready_server(*s);
  auto r = srv->handle_line(request(2, "tools/list"));
  const ordered_json& tools = (*r)["result"]["tools"];
  ASSERT_EQ(tools.size(), 4u);
  std::vector<std::string> names;
  for (const auto& t : tools) {
    names.push_back(t["name"]);
    const ordered_json& in = t["inputSchema"];
    EXPECT_EQ(in["type"], "object") << t["name"];
    EXPECT_EQ(in["additionalProperties"], false) << t["name"];
    EXPECT_TRUE(in["required"].is_array()) << t["name"];
    EXPECT_TRUE(t["title"].is_string() && t["description"].is_string());
    if (t.contains("outputSchema")) {
      EXPECT_EQ(t["outputSchema"]["type"], "object");
    }
  }
  EXPECT_EQ(names, (std::vector<std::string>{"list_definitions", "get_task", "compile", "evaluate"}));
  EXPECT_EQ(tools[1]["inputSchema"]["required"], ordered_json({"definition"}));
  EXPECT_TRUE(tools[1]["inputSchema"]["properties"].contains("tag"));
  EXPECT_EQ(tools[3]["inputSchema"]["required"], ordered_json({"source"}));
  EXPECT_EQ(tools[3]["inputSchema"]["properties"]["source"]["type"], "string");
  EXPECT_TRUE(tools[3].contains("outputSchema"));
  EXPECT_EQ(tools[3]["annotations"]["readOnlyHint"], false);
  EXPECT_TRUE(contains(tools[3]["description"], "5 evaluations"));
}

// ---------------------------------------------------------------------------------------- tools

TEST_F(McpTest, BadArgumentsAreToolErrorsAndDoNothing) {
  auto s = session(config());
  auto srv = ready_server(*s);
  auto expect_tool_error = [&](const std::string& tool, const ordered_json& args, const std::string& fragment) {
    ordered_json r = call(*srv, tool, args);
    ASSERT_TRUE(r.contains("result")) << r.dump();
    EXPECT_EQ(r["result"]["isError"], true) << tool << " " << args.dump();
    EXPECT_FALSE(r["result"].contains("structuredContent"));
    EXPECT_TRUE(contains(text_of(r), fragment)) << text_of(r);
  };
  expect_tool_error("evaluate", ordered_json::object(), "missing required argument 'source'");
  expect_tool_error("evaluate", {{"source", 42}}, "argument 'source' must be a string, got integer");
  expect_tool_error("evaluate", {{"source", ""}}, "must not be empty");
  expect_tool_error("evaluate", {{"source", kernel("")}, {"definition", kDefinition}}, "unknown argument 'definition'");
  expect_tool_error("evaluate", {{"source", std::string((1 << 20) + 1, 'x')}}, "the limit is 1048576");
  expect_tool_error("compile", {{"code", "x"}}, "unknown argument 'code'");
  expect_tool_error("list_definitions", {{"all", true}}, "takes no arguments");
  expect_tool_error("get_task", ordered_json::object(), "missing required argument 'definition'");
  expect_tool_error("get_task", {{"definition", "gemm_nope"}}, "gemm_nope");
  expect_tool_error("get_task", {{"definition", kDefinition}, {"tag", "no-such-tag"}}, "no-such-tag");
  EXPECT_EQ(s->used(), 0) << "nothing was evaluated or stored";
  EXPECT_TRUE(m_store.turns(s->trajectory_id()).empty());
}

TEST_F(McpTest, ListDefinitionsAndGetTaskAnswerTheAgentsPrompt) {
  auto s = session(config());
  auto srv = ready_server(*s);
  ordered_json list = call(*srv, "list_definitions", ordered_json::object());
  const ordered_json& sc = list["result"]["structuredContent"];
  EXPECT_EQ(list["result"]["isError"], false);
  EXPECT_EQ(sc["definitions"].size(), m_catalog.definitions().size());
  EXPECT_EQ(sc["evaluated_definition"], kDefinition);
  EXPECT_EQ(sc["prompt_tag"], m_prompts.default_tags().back());
  EXPECT_EQ(sc["remaining"], 3);
  int evaluated = 0;
  for (const auto& d : sc["definitions"]) evaluated += d["evaluated"].get<bool>();
  EXPECT_EQ(evaluated, 1);

  // The bound task is the prompt our agent gets, as stored with the trajectory.
  const Definition& def = m_catalog.definition(kDefinition);
  Prompt p = m_prompts.build(def, resolve_workload(def, m_catalog.default_workload(kDefinition)), m_prompts.default_tags().back());
  std::string task = text_of(call(*srv, "get_task", {{"definition", kDefinition}}));
  EXPECT_TRUE(contains(task, p.system));
  EXPECT_TRUE(contains(task, p.user));
  EXPECT_TRUE(contains(task, "3 of 3 evaluations left"));
  auto stored = m_store.messages(s->trajectory_id());
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_EQ(stored[0].content, p.system);
  EXPECT_EQ(stored[1].content, p.user);
  // Another tag is built the same way and says it is not this session's task.
  Prompt params = m_prompts.build(def, resolve_workload(def, m_catalog.default_workload(kDefinition)), "params");
  std::string other = text_of(call(*srv, "get_task", {{"definition", kDefinition}, {"tag", "params"}}));
  EXPECT_TRUE(contains(other, params.system));
  EXPECT_TRUE(contains(other, "not this task"));
}

TEST_F(McpTest, CompileAnswersTheStatusAndLogAndUsesNoBudget) {
  if (find_cuda_tool("nvcc").empty()) GTEST_SKIP() << "nvcc is not installed";
  auto s = session(config());
  auto srv = ready_server(*s);
  const std::string good = R"(#include "ptxbench_abi.h"
__global__ void scale(float* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] *= 2.0f;
}
PTXB_EXPORT int ptxb_run(const ptxb_tensor* args, int32_t nargs, cudaStream_t stream) {
  int n = (int)args[0].shape[0];
  scale<<<(n + 255) / 256, 256, 0, stream>>>((float*)args[0].data, n);
  return (int)cudaGetLastError();
}
)";
  ordered_json ok = call(*srv, "compile", {{"source", good}});
  EXPECT_EQ(ok["result"]["isError"], false);
  EXPECT_EQ(ok["result"]["structuredContent"]["status"], "ok") << text_of(ok);
  ASSERT_EQ(ok["result"]["structuredContent"]["kernels"].size(), 1u);
  EXPECT_EQ(ok["result"]["structuredContent"]["kernels"][0]["name"], "_Z5scalePfi");
  ordered_json bad = call(*srv, "compile", {{"source", "#include \"ptxbench_abi.h\"\nint broken( {\n"}});
  EXPECT_EQ(bad["result"]["isError"], false) << "a candidate that does not build is a result, not a tool failure";
  EXPECT_EQ(bad["result"]["structuredContent"]["status"], "compile_error");
  EXPECT_TRUE(contains(text_of(bad), "Compiler output:"));
  EXPECT_EQ(s->used(), 0);
}

TEST_F(McpTest, EvaluateStoresEachCallAsATurnAndRefusesPastTheBudget) {
  auto s = session(config(3));
  auto srv = ready_server(*s);
  std::vector<ordered_json> sent;
  McpServer::Send record = [&](const ordered_json& m) { sent.push_back(m); };
  const std::vector<std::string> sources = {kernel("PTXB_FAKE_STATUS=COMPILE_ERROR PTXB_FAKE_SECONDS=0.02"),
                                            kernel("PTXB_FAKE_STATUS=INCORRECT_NUMERICAL PTXB_FAKE_SECONDS=0.02"),
                                            kernel("PTXB_FAKE_SPEEDUP=1.5 PTXB_FAKE_SECONDS=0.8")};
  std::vector<ordered_json> results;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    ordered_json params = {{"name", "evaluate"}, {"arguments", {{"source", sources[i]}}}};
    if (i == 2) params["_meta"] = {{"progressToken", "tok"}};
    auto r = srv->handle_line(request(10 + static_cast<int>(i), "tools/call", params), record);
    ASSERT_TRUE(r && r->contains("result")) << (r ? r->dump() : "no answer");
    EXPECT_EQ((*r)["result"]["isError"], false) << r->dump();
    results.push_back((*r)["result"]);
  }
  EXPECT_EQ(results[0]["structuredContent"]["status"], "COMPILE_ERROR");
  EXPECT_EQ(results[1]["structuredContent"]["status"], "INCORRECT_NUMERICAL");
  const ordered_json& passed = results[2]["structuredContent"];
  EXPECT_EQ(passed["status"], "PASSED");
  EXPECT_DOUBLE_EQ(passed["speedup"].get<double>(), 1.5);
  EXPECT_EQ(passed["target_instruction"], true);
  EXPECT_EQ(passed["turn"], 3);
  EXPECT_EQ(passed["remaining"], 0);
  EXPECT_EQ(passed["trajectory_finished"], true);
  EXPECT_TRUE(results[0]["structuredContent"]["speedup"].is_null());
  EXPECT_EQ(results[1]["structuredContent"]["remaining"], 1);
  EXPECT_TRUE(contains(results[1]["content"][0]["text"], "1 evaluation left"));
  // Progress while the 0.8 s verdict was awaited (polled every 0.2 s), increasing, with our token.
  ASSERT_FALSE(sent.empty());
  for (std::size_t i = 0; i < sent.size(); ++i) {
    EXPECT_EQ(sent[i]["method"], "notifications/progress");
    EXPECT_EQ(sent[i]["params"]["progressToken"], "tok");
    EXPECT_EQ(sent[i]["params"]["progress"], static_cast<int>(i) + 1);
  }

  // Past the budget: refused, nothing submitted, nothing stored.
  ordered_json refused = call(*srv, "evaluate", {{"source", kernel("PTXB_FAKE_SPEEDUP=9")}}, 20);
  EXPECT_EQ(refused["result"]["isError"], true);
  EXPECT_TRUE(contains(text_of(refused), "request budget of 3 evaluations used up")) << text_of(refused);
  // Free tools still answer.
  EXPECT_EQ(call(*srv, "list_definitions", ordered_json::object())["result"]["structuredContent"]["remaining"], 0);

  // The store holds three complete turns, as our own agent's turns are stored.
  TrajectoryInfo t = m_store.trajectory(s->trajectory_id());
  EXPECT_EQ(t.status, TrajectoryStatus::finished);
  EXPECT_EQ(t.stop_reason, budget_reason(3));
  EXPECT_EQ(t.turns_completed, 3);
  ASSERT_TRUE(t.best_speedup);
  EXPECT_DOUBLE_EQ(*t.best_speedup, 1.5);
  auto turns = m_store.turns(s->trajectory_id());
  ASSERT_EQ(turns.size(), 3u);
  const std::vector<std::string> statuses = {"COMPILE_ERROR", "INCORRECT_NUMERICAL", "PASSED"};
  for (std::size_t i = 0; i < turns.size(); ++i) {
    const TurnRecord& turn = turns[i];
    EXPECT_EQ(turn.step, TurnStep::complete);
    EXPECT_EQ(turn.status, statuses[i]);
    EXPECT_EQ(*turn.candidate_source, sources[i]);
    EXPECT_EQ(source_of_answer(*turn.answer), sources[i]) << "the answer carries the source in a ```cuda block";
    EXPECT_TRUE(contains(*turn.answer, "gtest 1")) << "the client's name";
    ASSERT_TRUE(turn.usage);
    EXPECT_EQ(turn.usage->prompt_tokens + turn.usage->completion_tokens, 0) << "usage hook: zero until the proxy (item 2)";
    EXPECT_EQ(turn.usage->provider, "mcp");
    ASSERT_TRUE(turn.verdict);
    EXPECT_TRUE(turn.verdict->fake_backend);
    EXPECT_EQ(*turn.feedback, render_feedback(*turn.verdict));
    EXPECT_TRUE(turn.completed_at);
  }
  EXPECT_TRUE(turns[2].correct && turns[2].target_instruction);
  RunInfo run = m_store.run(s->run_id());
  EXPECT_EQ(run.config["policy"], kMcpPolicy);
  EXPECT_EQ(run.config["num_turns"], 3);
  EXPECT_EQ(run.model, kMcpPolicy);
  s->end();
  EXPECT_EQ(m_store.trajectory(s->trajectory_id()).stop_reason, budget_reason(3)) << "the budget's reason stays";
  EXPECT_EQ(m_store.run(s->run_id()).status, RunStatus::finished);
}

TEST_F(McpTest, ARestartedSessionCountsOnFromTheStoredTurns) {
  std::string run_id;
  {
    auto s = session(config(3));
    run_id = s->run_id();
    auto srv = ready_server(*s);
    EXPECT_EQ(call(*srv, "evaluate", {{"source", kernel("PTXB_FAKE_SECONDS=0.02")}})["result"]["isError"], false);
    s->end();  // the client closed stdin
    TrajectoryInfo t = m_store.trajectory(s->trajectory_id());
    EXPECT_EQ(t.status, TrajectoryStatus::finished);
    EXPECT_EQ(t.stop_reason, kEndedReason);
    EXPECT_EQ(m_store.run(run_id).status, RunStatus::finished);
  }
  SessionConfig again = config();
  again.run_id = run_id;
  again.budget.reset();  // an existing run keeps its own
  auto s = session(again);
  EXPECT_EQ(s->budget(), 3);
  EXPECT_EQ(s->used(), 1);
  EXPECT_EQ(m_store.trajectory(s->trajectory_id()).status, TrajectoryStatus::running) << "reopened";
  EXPECT_EQ(m_store.run(run_id).status, RunStatus::running);
  auto srv = ready_server(*s);
  ordered_json second = call(*srv, "evaluate", {{"source", kernel("PTXB_FAKE_SECONDS=0.02 second")}});
  EXPECT_EQ(second["result"]["structuredContent"]["turn"], 2);
  EXPECT_EQ(second["result"]["structuredContent"]["remaining"], 1);
  EXPECT_EQ(call(*srv, "evaluate", {{"source", kernel("PTXB_FAKE_SECONDS=0.02 third")}})["result"]["isError"], false);
  EXPECT_EQ(call(*srv, "evaluate", {{"source", kernel("fourth")}})["result"]["isError"], true);
  EXPECT_EQ(m_store.turns(s->trajectory_id()).size(), 3u);
  EXPECT_EQ(m_store.list_trajectories(run_id).size(), 1u) << "the same trajectory, not a new one";

  // A budget-ended trajectory stays ended; another index of the same run starts fresh.
  auto done = session(again);
  EXPECT_EQ(done->remaining(), 0);
  EXPECT_THROW((void)done->evaluate(kernel("x")), BudgetExhausted);
  SessionConfig next = again;
  next.index = 1;
  EXPECT_EQ(session(next)->remaining(), 3);

  SessionConfig wrong_budget = again;
  wrong_budget.budget = 5;
  EXPECT_THROW(session(wrong_budget), InputError);
  std::string not_mcp = m_store.create_run({{"policy", "model"}, {"num_turns", 8}}, "m");
  SessionConfig foreign = config();
  foreign.run_id = not_mcp;
  foreign.budget.reset();
  EXPECT_THROW(session(foreign), InputError);
  SessionConfig bad_tag = config();
  bad_tag.tag = "no-such-tag";
  std::size_t runs = m_store.list_runs().size();
  EXPECT_THROW(session(bad_tag), InputError);
  EXPECT_EQ(m_store.list_runs().size(), runs) << "an unknown tag leaves no empty run behind";
}

TEST_F(McpTest, AnInterruptedEvaluationIsCollectedBeforeTheNextOne) {
  auto s = session(config(3));
  // A session killed after storing the answer, before the candidate and the submission.
  const std::string first = kernel("PTXB_FAKE_STATUS=RUNTIME_ERROR PTXB_FAKE_SECONDS=0.02");
  m_store.begin_turn(s->trajectory_id(), 1);
  m_store.record_model_answer(s->trajectory_id(), 1, submission_answer("old client", first), ModelUsage{});
  EXPECT_EQ(s->used(), 1) << "an evaluation in flight counts against the budget";
  auto srv = ready_server(*s);
  ordered_json r = call(*srv, "evaluate", {{"source", kernel("PTXB_FAKE_SPEEDUP=1.1 PTXB_FAKE_SECONDS=0.02")}});
  EXPECT_EQ(r["result"]["structuredContent"]["turn"], 2);
  EXPECT_TRUE(contains(text_of(r), "Evaluation 1 (from an earlier session)")) << text_of(r);
  auto turns = m_store.turns(s->trajectory_id());
  ASSERT_EQ(turns.size(), 2u);
  EXPECT_EQ(turns[0].status, "RUNTIME_ERROR");
  EXPECT_EQ(*turns[0].candidate_source, first);
  EXPECT_EQ(turns[1].status, "PASSED");
  // end() leaves a turn that waits for its verdict for a later session.
  m_store.begin_turn(s->trajectory_id(), 3);
  s->end();
  EXPECT_EQ(m_store.trajectory(s->trajectory_id()).status, TrajectoryStatus::running);
}

// ---------------------------------------------------------------------------------------- stdio

TEST_F(McpTest, ServeAnswersPingAndCancellationWhileAnEvaluationRuns) {
  auto s = session(config(3));
  auto srv = server(*s);
  int in[2], out[2];
  ASSERT_EQ(::pipe(in), 0);
  ASSERT_EQ(::pipe(out), 0);
  std::thread loop([&] { srv->serve(in[0], out[1]); });
  auto send = [&](const std::string& line) {
    std::string l = line + "\n";
    ASSERT_EQ(::write(in[1], l.data(), l.size()), static_cast<ssize_t>(l.size()));
  };
  LineReader reader(out[0]);
  auto next = [&] { return ordered_json::parse(reader.next().value().text); };
  send(kInitialize);
  EXPECT_EQ(next()["id"], 1);
  send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  send(call_line(2, "evaluate", {{"source", kernel("PTXB_FAKE_SECONDS=1.0 slow")}}));
  send(call_line(3, "evaluate", {{"source", kernel("PTXB_FAKE_SECONDS=1.0 cancelled")}}));
  send(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"test"}})");
  send(request(4, "ping"));
  EXPECT_EQ(next()["id"], 4) << "ping is answered while the evaluations run";
  ordered_json eval = next();
  EXPECT_EQ(eval["id"], 2);
  EXPECT_EQ(eval["result"]["isError"], false);
  send("not json");
  EXPECT_EQ(next()["error"]["code"], kParseError);
  ::close(in[1]);  // the client ends the session
  loop.join();
  ::close(out[1]);
  EXPECT_FALSE(reader.next()) << "the cancelled call got no answer";
  ::close(in[0]);
  ::close(out[0]);
  // Both evaluations were submitted, so both are stored; then end of input ended the trajectory.
  EXPECT_EQ(m_store.turns(s->trajectory_id()).size(), 2u);
  TrajectoryInfo t = m_store.trajectory(s->trajectory_id());
  EXPECT_EQ(t.status, TrajectoryStatus::finished);
  EXPECT_EQ(t.stop_reason, kEndedReason);
}

// A FlashInfer-Bench Solution in place of the .cu: the tools take the file it makes; one for
// another definition, or a malformed one, is refused before a turn begins (no budget used).
TEST_F(McpTest, ASolutionIsAcceptedInPlaceOfTheSource) {
  auto s = session(config(2));
  auto srv = ready_server(*s);
  auto solution = [](const std::string& definition, const std::string& markers) {
    return ordered_json{{"name", "demo"},
                        {"definition", definition},
                        {"spec", {{"language", "cuda"}, {"entry_point", "kernel.cu::run"}, {"binding", "tvm-ffi"}}},
                        {"sources",
                         {{{"path", "kernel.cu"},
                           {"content", "#include <tvm/ffi/tvm_ffi.h>\n// " + markers +
                                           "\nvoid run(tvm::ffi::TensorView A, tvm::ffi::TensorView B, "
                                           "tvm::ffi::TensorView C) {}\nTVM_FFI_DLL_EXPORT_TYPED_FUNC(run, run);\n"}}}}}
        .dump(1);
  };
  ordered_json other = call(*srv, "evaluate", {{"source", solution("mha_bwd_d128", "PTXB_FAKE_SPEEDUP=2")}});
  EXPECT_EQ(other["result"]["isError"], true);
  EXPECT_TRUE(contains(text_of(other), "'mha_bwd_d128', not 'gemm_n7168_k5120'")) << text_of(other);
  ordered_json malformed = call(*srv, "evaluate", {{"source", "{\"name\": \"x\"}"}});
  EXPECT_EQ(malformed["result"]["isError"], true);
  EXPECT_TRUE(contains(text_of(malformed), "definition: missing required field")) << text_of(malformed);
  EXPECT_EQ(s->used(), 0);

  ordered_json passed = call(*srv, "evaluate", {{"source", solution(kDefinition, "PTXB_FAKE_SPEEDUP=1.25")}});
  ASSERT_EQ(passed["result"]["isError"], false) << passed.dump();
  EXPECT_EQ(passed["result"]["structuredContent"]["status"], "PASSED");
  auto turns = m_store.turns(s->trajectory_id());
  ASSERT_EQ(turns.size(), 1u);
  ASSERT_TRUE(turns[0].candidate_source);
  EXPECT_TRUE(contains(*turns[0].candidate_source, "FlashInfer-Bench solution \"demo\"")) << "the file the Solution made";

  if (find_cuda_tool("nvcc").empty()) GTEST_SKIP() << "nvcc is not installed";
  ordered_json built = call(*srv, "compile", {{"source", read_file(std::string(PTXBENCH_TEST_DATA) +
                                                                   "/fixtures/tvm_ffi/gemm_wgmma_solution.json")}});
  EXPECT_EQ(built["result"]["isError"], false) << built.dump();
  EXPECT_EQ(built["result"]["structuredContent"]["status"], "ok") << text_of(built);
}
