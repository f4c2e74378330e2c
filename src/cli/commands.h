// The ptxbench subcommands. Each registers itself on the app and sets `action` when chosen.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace ptxbench::cli {

using Action = std::function<int()>;

void register_definitions(CLI::App& app, Action& action);
void register_compile(CLI::App& app, Action& action);
void register_eval(CLI::App& app, Action& action);
void register_suite(CLI::App& app, Action& action);
void register_prompt(CLI::App& app, Action& action);
void register_serve(CLI::App& app, Action& action);
void register_run(CLI::App& app, Action& action);
void register_report(CLI::App& app, Action& action);
void register_import(CLI::App& app, Action& action);
void register_data(CLI::App& app, Action& action);
void register_mcp(CLI::App& app, Action& action);
void register_proxy(CLI::App& app, Action& action);
void register_agent(CLI::App& app, Action& action);

}  // namespace ptxbench::cli
