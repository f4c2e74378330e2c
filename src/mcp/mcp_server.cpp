#include "mcp/mcp_server.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <list>
#include <memory>
#include <thread>

#include "common/text.h"
#include "compile/solution.h"

namespace ptxbench::mcp {
namespace {

constexpr std::size_t kCompileLogShown = 3000;  // as much of nvcc's log as the feedback text shows

/// One argument of a tool, as its published input schema states it (check_arguments enforces that schema).
struct Param {
  const char* name;
  const char* type;  ///< JSON Schema type: "string" (the only one the tools take today)
  bool required;
  std::string description;
};

struct ToolSpec {
  const char* name;
  const char* title;
  std::string description;
  std::vector<Param> params;
  ordered_json output_schema;  ///< null: the tool answers with text only
  ordered_json annotations;
};

ordered_json input_schema(const ToolSpec& t) {
  ordered_json properties = ordered_json::object();
  ordered_json required = ordered_json::array();
  for (const auto& p : t.params) {
    ordered_json s = {{"type", p.type}, {"description", p.description}};
    if (std::string_view(p.type) == "string") s["minLength"] = 1;
    properties[p.name] = s;
    if (p.required) required.push_back(p.name);
  }
  return {{"type", "object"}, {"properties", properties}, {"required", required}, {"additionalProperties", false}};
}

std::string json_type(const ordered_json& v) {
  if (v.is_string()) return "string";
  if (v.is_number_integer()) return "integer";
  if (v.is_number()) return "number";
  if (v.is_boolean()) return "boolean";
  if (v.is_array()) return "array";
  if (v.is_object()) return "object";
  return "null";
}

/// What is wrong with `args` against a tool's input schema ("" when nothing). The schema is the
/// one tools/list publishes (input_schema above: object, typed properties, required, no others),
/// so what a client is told and what the server enforces cannot drift apart.
std::string check_arguments(const std::string& tool, const ordered_json& schema, const ordered_json& args) {
  const ordered_json& properties = schema["properties"];
  std::string names;
  for (const auto& [name, _] : properties.items()) names += (names.empty() ? "" : ", ") + name;
  std::vector<std::string> problems;
  for (const auto& [key, value] : args.items())
    if (!properties.contains(key))
      problems.push_back("unknown argument '" + key + "' (" + tool + " takes " + (names.empty() ? "no arguments" : names) + ")");
  for (const auto& required : schema["required"])
    if (!args.contains(required.get<std::string>()))
      problems.push_back("missing required argument '" + required.get<std::string>() + "'");
  for (const auto& [name, property] : properties.items()) {
    if (!args.contains(name)) continue;
    const ordered_json& v = args[name];
    std::string type = property["type"].get<std::string>();
    if (json_type(v) != type)
      problems.push_back(fmt::format("argument '{}' must be a {}, got {}", name, type, json_type(v)));
    else if (v.is_string() && property.contains("minLength") && v.get_ref<const std::string&>().empty())
      problems.push_back(fmt::format("argument '{}' must not be empty", name));
  }
  std::string out;
  for (const auto& p : problems) out += (out.empty() ? "" : "; ") + p;
  return out;
}

ordered_json text_content(const std::string& text) { return ordered_json::array({{{"type", "text"}, {"text", text}}}); }

ordered_json tool_result(const std::string& text, ordered_json structured = nullptr) {
  ordered_json r = {{"content", text_content(text)}};
  if (!structured.is_null()) r["structuredContent"] = std::move(structured);
  r["isError"] = false;
  return r;
}

ordered_json tool_error(const std::string& text) { return {{"content", text_content(text)}, {"isError", true}}; }

ordered_json nullable(const std::optional<double>& x) { return x ? ordered_json(*x) : ordered_json(nullptr); }

const ordered_json kNumberOrNull = {{"type", {"number", "null"}}};

/// The .cu a tool compiles or evaluates: the `source` argument itself, or the file that a
/// FlashInfer-Bench Solution given there as JSON makes (compile/solution.h). A Solution must be a
/// CUDA one and, with `definition`, for that definition. nullopt with `error` when it is refused.
std::optional<std::string> candidate_source(const std::string& text, const std::string& definition, std::string& error) {
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text[first] != '{') return text;  // a .cu never starts with '{'
  try {
    Solution solution = parse_solution(text, "the Solution");
    if (!definition.empty()) require_solution_definition(solution, definition, "the Solution");
    SolutionCandidate c = materialize_solution(solution, "the Solution");
    if (c.language != CandidateLanguage::cuda) {
      error = "The Solution is a " + solution.language + " one; this server evaluates CUDA candidates. Nothing was run.";
      return std::nullopt;
    }
    return c.source;
  } catch (const InputError& e) {
    error = std::string(e.what()) + ". Nothing was run.";
    return std::nullopt;
  }
}

std::vector<ToolSpec> tool_specs(const TrajectorySession& s) {
  const TrajectoryKey& k = s.key();
  ordered_json definition_item = {
      {"type", "object"},
      {"properties",
       {{"name", {{"type", "string"}}},
        {"op_type", {{"type", "string"}}},
        {"description", {{"type", "string"}}},
        {"default_workload", {{"type", "string"}}},
        {"evaluated", {{"type", "boolean"}, {"description", "the definition this session's evaluate tool evaluates"}}}}},
      {"required", {"name", "op_type", "description", "default_workload", "evaluated"}}};
  ordered_json kernel_item = {{"type", "object"},
                              {"properties",
                               {{"name", {{"type", "string"}}},
                                {"registers", {{"type", "integer"}}},
                                {"smem_bytes", {{"type", "integer"}}},
                                {"stack_frame_bytes", {{"type", "integer"}}},
                                {"spill_store_bytes", {{"type", "integer"}}},
                                {"spill_load_bytes", {{"type", "integer"}}}}},
                              {"required", {"name", "registers", "smem_bytes", "stack_frame_bytes", "spill_store_bytes",
                                            "spill_load_bytes"}}};
  const std::string free = " Free: uses none of the evaluation budget.";
  return {
      {"list_definitions",
       "List definitions",
       "The operator definitions the evaluator knows (name, op_type, default workload), and which one this session "
       "evaluates." + free,
       {},
       {{"type", "object"},
        {"properties",
         {{"definitions", {{"type", "array"}, {"items", definition_item}}},
          {"evaluated_definition", {{"type", "string"}}},
          {"prompt_tag", {{"type", "string"}}},
          {"budget", {{"type", "integer"}}},
          {"remaining", {{"type", "integer"}}}}},
        {"required", {"definitions", "evaluated_definition", "prompt_tag", "budget", "remaining"}}},
       {{"title", "List definitions"}, {"readOnlyHint", true}, {"openWorldHint", false}}},
      {"get_task",
       "Get the task",
       "The task exactly as ptxbench's own agent gives it to its model for a definition and a prompt tag: the system "
       "message (rules, the candidate ABI, the knowledge the tag selects) and the user message (the definition and its "
       "default workload). This session evaluates " + k.definition + " with tag " + k.prompt_tag + "." + free,
       {{"definition", "string", true, "definition name (list_definitions)"},
        {"tag", "string", false,
         "prompt tag (params, templates, contract, full, expert, paper-none, paper-a, paper-b, or components joined by "
         "'+'); default: this session's tag, " + k.prompt_tag}},
       nullptr,
       {{"title", "Get the task"}, {"readOnlyHint", true}, {"openWorldHint", false}}},
      {"compile",
       "Compile a candidate",
       "Compiles a candidate .cu with the evaluator's fixed nvcc flags for " + s.arch() +
           " and runs the static checks (banned APIs, the ABI): status ok, compile_error, banned_api, abi_error or "
           "timeout, with the compiler's log and the ptxas resource usage per kernel. Nothing runs on a GPU." + free,
       {{"source", "string", true,
         "the complete candidate .cu source (at most 1 MiB), or a FlashInfer-Bench Solution as JSON (spec.language cuda)"}},
       {{"type", "object"},
        {"properties",
         {{"status", {{"type", "string"}, {"enum", {"ok", "compile_error", "banned_api", "abi_error", "timeout"}}}},
          {"message", {{"type", "string"}}},
          {"cache_hit", {{"type", "boolean"}}},
          {"kernels", {{"type", "array"}, {"items", kernel_item}}}}},
        {"required", {"status", "message", "cache_hit", "kernels"}}},
       {{"title", "Compile a candidate"}, {"readOnlyHint", true}, {"idempotentHint", true}, {"openWorldHint", false}}},
      {"evaluate",
       "Evaluate a candidate",
       fmt::format("Evaluates a candidate for this session's task ({}, its default workload, on {}) through the evaluation "
                   "service: compile, compute-sanitizer, correctness against the reference, the tensor-core instructions "
                   "it really executes, and its time against the baseline. Answers with the feedback text ptxbench's own "
                   "agent's model reads and the verdict's key fields. Each call uses one of the trajectory's {} "
                   "evaluations and is stored as a turn; past the budget the call is refused and nothing is evaluated.",
                   k.definition, s.arch(), s.budget()),
       {{"source", "string", true,
         "the complete candidate .cu source defining ptxb_run or exporting run with TVM_FFI_DLL_EXPORT_TYPED_FUNC (at "
         "most 1 MiB), or a FlashInfer-Bench Solution for this definition as JSON (spec.language cuda)"}},
       {{"type", "object"},
        {"properties",
         {{"status", {{"type", "string"}, {"description", "PASSED, COMPILE_ERROR, INCORRECT_NUMERICAL, ... (docs/verdict.md)"}}},
          {"message", {{"type", "string"}}},
          {"speedup", kNumberOrNull},
          {"target_instruction", {{"type", "boolean"}, {"description", "PASSED and the target tensor-core instructions executed"}}},
          {"candidate_us", kNumberOrNull},
          {"baseline_us", kNumberOrNull},
          {"turn", {{"type", "integer"}}},
          {"budget", {{"type", "integer"}}},
          {"remaining", {{"type", "integer"}}},
          {"trajectory_finished", {{"type", "boolean"}}}}},
        {"required", {"status", "message", "speedup", "target_instruction", "candidate_us", "baseline_us", "turn", "budget",
                      "remaining", "trajectory_finished"}}},
       {{"title", "Evaluate a candidate"},
        {"readOnlyHint", false},
        {"destructiveHint", false},
        {"idempotentHint", false},
        {"openWorldHint", false}}},
  };
}

}  // namespace

const std::vector<std::string>& supported_protocol_versions() {
  static const std::vector<std::string> versions = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
  return versions;
}

McpServer::McpServer(const Catalog& catalog, const PromptBuilder& prompts, TrajectorySession& session, ServerOptions options)
    : m_catalog(catalog), m_prompts(prompts), m_session(session), m_options(std::move(options)) {
  m_options.compile.arch = session.arch();
  ordered_json list = ordered_json::array();
  for (const auto& t : tool_specs(session)) {
    ordered_json tool = {{"name", t.name}, {"title", t.title}, {"description", t.description}, {"inputSchema", input_schema(t)}};
    if (!t.output_schema.is_null()) tool["outputSchema"] = t.output_schema;
    tool["annotations"] = t.annotations;
    list.push_back(tool);
  }
  m_tools = {{"tools", list}};
}

void McpServer::log(const std::string& line) const {
  if (m_options.log) m_options.log(line);
  else std::fprintf(stderr, "[mcp] %s\n", line.c_str());
}

std::optional<ordered_json> McpServer::handle_line(std::string_view line, const Send& send) {
  ParsedLine p = parse_line(line);
  if (!p.message) {
    if (p.error_response.is_null()) return std::nullopt;
    return p.error_response;
  }
  return handle(*p.message, send);
}

std::optional<ordered_json> McpServer::handle(const RpcMessage& m, const Send& send) {
  if (m.kind == MessageKind::response) return std::nullopt;  // we send no requests
  if (m.kind == MessageKind::notification) {
    if (m.method == "notifications/initialized") {
      std::lock_guard lock(m_mutex);
      if (m_state == State::initialized) m_state = State::ready;
    }
    return std::nullopt;  // cancellation is the transport's (serve); any other notification is ignored
  }
  try {
    if (m.method == "initialize") return make_response(m.id, initialize(m.params));
    if (m.method == "ping") return make_response(m.id, ordered_json::object());
    bool known = m.method == "tools/list" || m.method == "tools/call";
    if (!known) throw RpcError(kMethodNotFound, "Method not found: " + m.method);
    {
      std::lock_guard lock(m_mutex);
      if (m_state == State::fresh) throw RpcError(kInvalidRequest, "Invalid Request: send initialize first");
    }
    if (m.method == "tools/list") {
      if (m.params.contains("cursor")) throw RpcError(kInvalidParams, "Invalid params: unknown cursor (the tool list has one page)");
      return make_response(m.id, m_tools);
    }
    return make_response(m.id, call_tool(m.params, send));
  } catch (const RpcError& e) {
    return make_error(m.id, e.code(), e.message(), e.data());
  } catch (const std::exception& e) {
    return make_error(m.id, kInternalError, std::string("Internal error: ") + e.what());
  }
}

ordered_json McpServer::initialize(const ordered_json& params) {
  if (!params.contains("protocolVersion") || !params["protocolVersion"].is_string())
    throw RpcError(kInvalidParams, "Invalid params: initialize needs protocolVersion (a string)");
  std::string asked = params["protocolVersion"].get<std::string>();
  const auto& supported = supported_protocol_versions();
  std::string version = std::find(supported.begin(), supported.end(), asked) != supported.end() ? asked : kProtocolVersion;
  std::string client;
  if (params.contains("clientInfo") && params["clientInfo"].is_object()) {
    const ordered_json& info = params["clientInfo"];
    client = info.value("name", "");
    if (info.contains("version") && info["version"].is_string()) client += " " + info["version"].get<std::string>();
  }
  {
    std::lock_guard lock(m_mutex);
    if (m_state != State::fresh) throw RpcError(kInvalidRequest, "Invalid Request: the session is initialized already");
    m_state = State::initialized;
    m_version = version;
  }
  m_session.set_client(client);
  log(fmt::format("client {} asked for protocol {}, answered {}", client.empty() ? "(unnamed)" : client, asked, version));
  const TrajectoryKey& k = m_session.key();
  std::string instructions = fmt::format(
      "ptxbench evaluates LLM-written CUDA/PTX kernels: correct, really using the target tensor-core instructions, and "
      "fast. This session is one trajectory: definition {} (its default workload), prompt tag {}, target {}. Call "
      "get_task with definition {} for the task, compile to check a build (free), and evaluate to get a verdict: "
      "{} evaluations in all, {} left.",
      k.definition, k.prompt_tag, m_session.arch(), k.definition, m_session.budget(), m_session.remaining());
  return {{"protocolVersion", version},
          {"capabilities", {{"tools", {{"listChanged", false}}}}},
          {"serverInfo", {{"name", "ptxbench"}, {"title", "ptxbench kernel evaluator"}, {"version", m_options.version}}},
          {"instructions", instructions}};
}

ordered_json McpServer::call_tool(const ordered_json& params, const Send& send) {
  if (!params.contains("name") || !params["name"].is_string())
    throw RpcError(kInvalidParams, "Invalid params: tools/call needs the tool's name (a string)");
  std::string name = params["name"].get<std::string>();
  const ordered_json* tool = nullptr;
  std::string names;
  for (const auto& t : m_tools["tools"]) {
    if (t["name"] == name) tool = &t;
    names += (names.empty() ? "" : ", ") + t["name"].get<std::string>();
  }
  if (!tool) throw RpcError(kInvalidParams, "Unknown tool: " + name + " (tools: " + names + ")");
  ordered_json args = ordered_json::object();
  if (params.contains("arguments") && !params["arguments"].is_null()) {
    if (!params["arguments"].is_object()) throw RpcError(kInvalidParams, "Invalid params: arguments must be an object");
    args = params["arguments"];
  }
  if (std::string problem = check_arguments(name, (*tool)["inputSchema"], args); !problem.empty())
    return tool_error("Invalid arguments for " + name + ": " + problem + ". Nothing was done.");
  ordered_json token = nullptr;
  if (params.contains("_meta") && params["_meta"].is_object() && params["_meta"].contains("progressToken"))
    token = params["_meta"]["progressToken"];
  try {
    if (name == "list_definitions") return list_definitions();
    if (name == "get_task") return get_task(args);
    if (name == "compile") return compile(args);
    return evaluate(args, token, send);
  } catch (const RunStoreError& e) {
    // The turn could not be recorded: a fault of ours, not something the agent can act on.
    throw RpcError(kInternalError, std::string("Internal error: ") + e.what());
  } catch (const BudgetExhausted& e) {
    return tool_error(JsonChecker::message_of(e));
  } catch (const Error& e) {
    return tool_error(name + " failed: " + e.what());
  }
}

ordered_json McpServer::list_definitions() const {
  const TrajectoryKey& k = m_session.key();
  int remaining = m_session.remaining();
  ordered_json defs = ordered_json::array();
  std::string text = fmt::format("This session evaluates {} with prompt tag {} ({} of {} evaluations left).\n\nDefinitions:\n",
                                 k.definition, k.prompt_tag, remaining, m_session.budget());
  for (const auto& d : m_catalog.definitions()) {
    std::string workload = m_catalog.default_workload(d.name).label(d);
    bool evaluated = d.name == k.definition;
    defs.push_back({{"name", d.name}, {"op_type", d.op_type}, {"description", d.description}, {"default_workload", workload},
                    {"evaluated", evaluated}});
    text += fmt::format("- {} ({}; default workload {}){}\n", d.name, d.op_type, workload,
                        evaluated ? "  <- evaluated in this session" : "");
  }
  return tool_result(text, {{"definitions", defs},
                            {"evaluated_definition", k.definition},
                            {"prompt_tag", k.prompt_tag},
                            {"budget", m_session.budget()},
                            {"remaining", remaining}});
}

ordered_json McpServer::get_task(const ordered_json& args) const {
  const TrajectoryKey& k = m_session.key();
  std::string definition = args["definition"].get<std::string>();
  std::string tag = args.contains("tag") ? args["tag"].get<std::string>() : k.prompt_tag;
  const Definition& def = m_catalog.definition(definition);  // InputError naming the known ones
  bool bound = definition == k.definition && tag == k.prompt_tag;
  // The bound task is the trajectory's stored prompt; any other is built the same way.
  Prompt p = bound ? m_session.prompt()
                   : m_prompts.build(def, resolve_workload(def, m_catalog.default_workload(definition)), tag, m_session.arch());
  std::string text = "===== system message =====\n" + p.system + "\n\n===== user message =====\n" + p.user + "\n\n";
  if (bound)
    text += fmt::format("This is this session's task. Submit the complete .cu with the evaluate tool ({} of {} evaluations "
                        "left); compile checks a build for free.",
                        m_session.remaining(), m_session.budget());
  else
    text += fmt::format("Note: this session's evaluate tool evaluates {} (prompt tag {}), not this task.", k.definition,
                        k.prompt_tag);
  return tool_result(text);
}

ordered_json McpServer::compile(const ordered_json& args) const {
  std::string refused;
  std::optional<std::string> given = candidate_source(args["source"].get_ref<const std::string&>(), "", refused);
  if (!given) return tool_error(refused);
  const std::string& source = *given;
  if (source.size() > m_options.max_source_bytes)
    return tool_error(fmt::format("The source is {} bytes; the limit is {}. Nothing was compiled.", source.size(),
                                  m_options.max_source_bytes));
  CompileResult r = Compiler(m_options.compile).compile(source);
  std::string text = fmt::format("Compile: {}{}.\n", to_string(r.status), r.cache_hit ? " (cached)" : "");
  // As the feedback text shows it: nvcc's log for a build that failed (its message repeats the
  // log), the message for the other failures.
  if (r.status == CompileStatus::compile_error && !r.log.empty())
    text += "Compiler output:\n" + cut(r.log, kCompileLogShown, "\n[... {} more characters cut ...]") + "\n";
  else if (!r.ok() && !r.message.empty())
    text += r.message + "\n";
  ordered_json kernels = ordered_json::array();
  for (const auto& k : r.ptxas.kernels) {
    text += fmt::format("kernel {}: {} registers, {} B static shared memory, {} B stack, {} B spill stores, {} B spill loads\n",
                        k.name, k.registers, k.smem_bytes, k.stack_frame_bytes, k.spill_store_bytes, k.spill_load_bytes);
    kernels.push_back({{"name", k.name},
                       {"registers", k.registers},
                       {"smem_bytes", k.smem_bytes},
                       {"stack_frame_bytes", k.stack_frame_bytes},
                       {"spill_store_bytes", k.spill_store_bytes},
                       {"spill_load_bytes", k.spill_load_bytes}});
  }
  for (const auto& w : r.ptxas.warnings) text += w + "\n";
  text += "(compile only: no evaluation was used)";
  return tool_result(text, {{"status", to_string(r.status)}, {"message", r.message}, {"cache_hit", r.cache_hit}, {"kernels", kernels}});
}

ordered_json McpServer::evaluate(const ordered_json& args, const ordered_json& progress_token, const Send& send) {
  std::string refused;
  std::optional<std::string> given =
      candidate_source(args["source"].get_ref<const std::string&>(), m_session.key().definition, refused);
  if (!given) return tool_error(refused);  // refused before a turn begins: no evaluation is used
  const std::string& source = *given;
  if (source.size() > m_options.max_source_bytes)
    return tool_error(fmt::format("The source is {} bytes; the limit is {}. Nothing was evaluated.", source.size(),
                                  m_options.max_source_bytes));
  ProgressFn progress;
  if (!progress_token.is_null() && send) {
    auto count = std::make_shared<int>(0);
    progress = [progress_token, send, count](double waited_s, const std::string& state) {
      send(make_notification("notifications/progress",
                             {{"progressToken", progress_token},
                              {"progress", ++*count},
                              {"message", fmt::format("waiting for the verdict: task {}, {:.0f} s", state, waited_s)}}));
    };
  }
  EvaluationResult r = m_session.evaluate(source, progress);
  const Verdict& v = r.verdict;
  std::string text = r.note.empty() ? "" : r.note + "\n\n";
  text += r.feedback;
  text += fmt::format("\n\n---\nEvaluation {} of {}: {}; speedup {}; target instruction {}. {} evaluation{} left.", r.turn,
                      r.budget, to_string(v.status), v.speedup ? fmt::format("{:.3f}", *v.speedup) : "n/a",
                      v.target_instruction_correct ? "yes" : "no", r.remaining(), r.remaining() == 1 ? "" : "s");
  if (r.finished) text += " The budget is spent: this trajectory is finished.";
  return tool_result(text, {{"status", to_string(v.status)},
                            {"message", v.message},
                            {"speedup", nullable(v.speedup)},
                            {"target_instruction", v.target_instruction_correct},
                            {"candidate_us", nullable(v.candidate_us)},
                            {"baseline_us", nullable(v.baseline_us)},
                            {"turn", r.turn},
                            {"budget", r.budget},
                            {"remaining", r.remaining()},
                            {"trajectory_finished", r.finished}});
}

// ---------------------------------------------------------------------------------------- stdio

void McpServer::serve(int in_fd, int out_fd) {
  LineReader reader(in_fd);
  LineWriter writer(out_fd);
  std::atomic<bool> peer_gone{false};
  Send send = [&](const ordered_json& message) {
    try {
      writer.write(message);
    } catch (const Error& e) {
      if (!peer_gone.exchange(true)) log(e.what());
    }
  };
  // tools/call requests in flight, by id (as its JSON text): each on its own thread.
  struct Call {
    std::string id;
    std::shared_ptr<std::atomic<bool>> cancelled = std::make_shared<std::atomic<bool>>(false);
    std::shared_ptr<std::atomic<bool>> done = std::make_shared<std::atomic<bool>>(false);
    std::thread thread;
  };
  std::list<Call> calls;
  std::mutex calls_mutex;
  auto reap = [&](bool all) {
    std::lock_guard lock(calls_mutex);
    for (auto it = calls.begin(); it != calls.end();) {
      if (all || it->done->load()) {
        it->thread.join();
        it = calls.erase(it);
      } else {
        ++it;
      }
    }
  };
  while (auto line = reader.next()) {
    reap(false);
    if (line->too_long) {
      send(make_error(nullptr, kInvalidRequest,
                      fmt::format("Invalid Request: a message longer than {} bytes", LineReader::kDefaultMaxLine)));
      continue;
    }
    if (line->text.find_first_not_of(" \t\r") == std::string::npos) continue;
    ParsedLine p = parse_line(line->text);
    if (!p.message) {
      if (!p.error_response.is_null()) send(p.error_response);
      continue;
    }
    RpcMessage& m = *p.message;
    if (m.kind == MessageKind::notification && m.method == "notifications/cancelled") {
      if (m.params.contains("requestId")) {
        std::string id = m.params["requestId"].dump();
        std::lock_guard lock(calls_mutex);
        for (auto& c : calls)
          if (c.id == id) c.cancelled->store(true);
      }
      continue;
    }
    if (m.kind == MessageKind::request && m.method == "tools/call") {
      std::lock_guard lock(calls_mutex);
      Call& c = calls.emplace_back();
      c.id = m.id.dump();
      c.thread = std::thread([this, m = std::move(m), cancelled = c.cancelled, done = c.done, &send] {
        Send unless_cancelled = [&](const ordered_json& message) {
          if (!cancelled->load()) send(message);
        };
        std::optional<ordered_json> answer = handle(m, unless_cancelled);
        if (answer) unless_cancelled(*answer);
        done->store(true);
      });
      continue;
    }
    if (auto answer = handle(m, send)) send(*answer);
  }
  reap(true);
  m_session.end();
}

}  // namespace ptxbench::mcp
