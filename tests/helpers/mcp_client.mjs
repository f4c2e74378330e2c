// The official MCP TypeScript SDK's client (installed by scripts/install_mcp_client.sh) driving
// `ptxbench mcp` over stdio, for tests/cpu/mcp/test_mcp_with_sdk_client.cpp: initialize, ping,
// tools/list, list_definitions, get_task, compile, one evaluate per source of the plan (the test
// gives budget + 1 of them, so the last must be refused), then calls with bad arguments and an
// unknown tool; then it closes the connection as a client does (stdin closed) and prints a
// summary. The SDK validates every structuredContent against the tool's outputSchema itself.
//
// Usage: node tests/helpers/mcp_client.mjs <third_party/mcp> <plan.json> <server command> [args...]
// plan.json: {"definition": D, "compile_source": S, "sources": [S, ...]}
// Prints one line: a JSON summary. Exit 0 when the client ran through (whatever the server said),
// 1 when it could not (connection, a protocol step that threw unexpectedly).
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";

const [prefix, planFile, command, ...args] = process.argv.slice(2);
if (!prefix || !planFile || !command) {
  process.stderr.write("usage: mcp_client.mjs <third_party/mcp> <plan.json> <server command> [args...]\n");
  process.exit(2);
}
// Resolve the SDK from its install folder, not from this script's folder.
const require = createRequire(path.join(path.resolve(prefix), "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport, getDefaultEnvironment } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { McpError, LATEST_PROTOCOL_VERSION } = require("@modelcontextprotocol/sdk/types.js");
const sdkVersion = JSON.parse(readFileSync(require.resolve("@modelcontextprotocol/sdk/package.json"), "utf8")).version;

const plan = JSON.parse(readFileSync(planFile, "utf8"));
// The SDK passes only a few variables (HOME, PATH, ...) to the server: hand ours on explicitly.
const env = getDefaultEnvironment();
for (const [key, value] of Object.entries(process.env)) if (key.startsWith("PTXBENCH_")) env[key] = value;

const transport = new StdioClientTransport({ command, args, env, stderr: "inherit" });
let negotiated = null;
transport.setProtocolVersion = (version) => {  // the client calls it with the initialize answer's version
  negotiated = version;
};
const client = new Client({ name: "ptxbench-sdk-test", version: "1.0.0" });

const text = (result) => (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");

// A tool call as the summary records it: the result, or the protocol error it threw.
async function call(name, args) {
  try {
    const r = await client.callTool({ name, arguments: args });
    return { isError: r.isError === true, text: text(r), structuredContent: r.structuredContent ?? null };
  } catch (e) {
    if (e instanceof McpError) return { protocolError: { code: e.code, message: e.message } };
    throw e;
  }
}

const summary = { sdkVersion, askedVersion: LATEST_PROTOCOL_VERSION };
try {
  await client.connect(transport);
  summary.protocolVersion = negotiated;
  summary.serverInfo = client.getServerVersion();
  summary.capabilities = client.getServerCapabilities();
  summary.instructions = client.getInstructions() ?? null;
  summary.ping = await client.ping();
  const listed = await client.listTools();
  summary.tools = listed.tools.map((t) => ({
    name: t.name,
    title: t.title ?? null,
    inputSchema: t.inputSchema,
    hasOutputSchema: t.outputSchema !== undefined,
  }));
  summary.listDefinitions = await call("list_definitions", {});
  const task = await call("get_task", { definition: plan.definition });
  summary.getTask = { isError: task.isError, chars: task.text.length, text: task.text.slice(0, 2000) };
  summary.compile = await call("compile", { source: plan.compile_source });
  summary.evaluations = [];
  for (const source of plan.sources) summary.evaluations.push(await call("evaluate", { source }));
  summary.badArguments = {
    missing: await call("evaluate", {}),
    wrongType: await call("evaluate", { source: 5 }),
    extra: await call("evaluate", { source: "x", definition: plan.definition }),
    unknownDefinition: await call("get_task", { definition: "no_such_definition" }),
    unknownTool: await call("no_such_tool", {}),
  };
  await client.close();  // closes the server's stdin, as a client does at the end of a session
  summary.closed = true;
  process.stdout.write(JSON.stringify(summary) + "\n");
} catch (e) {
  summary.failure = String(e?.stack ?? e);
  process.stdout.write(JSON.stringify(summary) + "\n");
  await client.close().catch(() => {});
  process.exit(1);
}
