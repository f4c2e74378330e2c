// ptxbench: evaluates LLM-written architecture-specific GPU kernels. `ptxbench --help` lists the
// commands; docs/cli.md documents them.
#include <cstdio>

#include "cli/commands.h"
#include "common/error.h"

int main(int argc, char** argv) {
  CLI::App app{"ptxbench: are LLM-written PTX kernels correct, really using wgmma/TMA/tcgen05, and fast?"};
  app.require_subcommand(1);
  ptxbench::cli::Action action;
  ptxbench::cli::register_definitions(app, action);
  ptxbench::cli::register_compile(app, action);
  ptxbench::cli::register_eval(app, action);
  ptxbench::cli::register_suite(app, action);
  ptxbench::cli::register_prompt(app, action);
  ptxbench::cli::register_serve(app, action);
  ptxbench::cli::register_run(app, action);
  ptxbench::cli::register_report(app, action);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    return action ? action() : 0;
  } catch (const ptxbench::InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  } catch (const ptxbench::EnvironmentError& e) {
    std::fprintf(stderr, "environment error: %s\n", e.what());
    return 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "internal error: %s\n", e.what());
    return 1;
  }
}
