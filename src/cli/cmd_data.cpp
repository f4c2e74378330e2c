// `ptxbench data build RECIPE.json [--store FILE] --out DIR [--dry-run] [--json]`, `ptxbench data
// show DIR` and `ptxbench data notes RECIPE.json --notes FILE [--store FILE] [--dry-run] [--json]`:
// fine-tuning datasets (fixit, kernelgen) and repair notes from stored runs, as a recipe says
// (docs/design.md §9; docs/adaptation.md).
#include <fmt/format.h>

#include <cstdio>

#include "adapt/data_recipe.h"
#include "adapt/dataset_builder.h"
#include "adapt/note_synthesis.h"
#include "runs/run_store.h"
#include "cli/commands.h"
#include "common/error.h"
#include "common/fs.h"
#include "definitions/catalog.h"

namespace ptxbench::cli {
namespace {

struct DataArgs {
  std::string recipe, store = "runs/runs.db", out, dir, notes, cache;
  bool dry_run = false, json = false;
};

int build_command(const DataArgs& a) {
  DataRecipe recipe = load_data_recipe(a.recipe);
  if (!fs::exists(a.store)) throw InputError("data", "no run store at " + a.store + " (--store FILE)");
  RunStore store(a.store, RunStore::Open::existing);
  if (a.dry_run) {
    DatasetPlan plan = plan_dataset(store, recipe);
    if (a.json)
      fmt::print("{}\n", ordered_json{{"recipe", recipe.to_json()}, {"selection", plan.to_json()}}.dump(
                             2, ' ', false, ordered_json::error_handler_t::replace));
    else
      fmt::print("{}(dry run: no teacher called, nothing written)\n", describe_plan(recipe, plan));
    return 0;
  }
  if (a.out.empty()) throw InputError("data", "--out DIR is required (or --dry-run)");
  BuildOptions options;
  options.progress = [](const std::string& line) { fmt::print(stderr, "[data] {}\n", line); };
  BuildResult r = build_dataset(store, recipe, a.out, options);
  if (a.json) {
    fmt::print("{}", r.manifest.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n");
  } else {
    fmt::print("{}", describe_plan(recipe, r.plan));
    fmt::print("records: {} (train {}, eval {}); reasoning rejected {}; teacher calls {}, from the cache {}\n", r.records,
               r.train, r.eval, r.reasoning_rejected, r.teacher_calls, r.cache_hits);
    fmt::print("written to {}: train.jsonl, eval.jsonl, manifest.json, composition.html, dataset_info.json\n", a.out);
  }
  return 0;
}

int notes_command(const DataArgs& a) {
  DataRecipe recipe = load_data_recipe(a.recipe);
  check_notes_recipe(recipe);
  if (!fs::exists(a.store)) throw InputError("data", "no run store at " + a.store + " (--store FILE)");
  RunStore store(a.store, RunStore::Open::existing);
  // Notes are filed by op family: the op_type of each definition, from the catalog.
  const Catalog catalog = Catalog::load(data_root());
  NotesOptions options;
  options.op_type = [&catalog](const std::string& definition) {
    for (const auto& d : catalog.definitions())
      if (d.name == definition) return d.op_type;
    throw InputError("data", "definition '" + definition + "' of the stored runs is not in the catalog (" +
                                 (data_root() / "definitions").string() + "): its op family, which notes are filed under, is unknown");
  };
  options.cache_dir = a.cache;
  options.dry_run = a.dry_run;
  options.progress = [](const std::string& line) { fmt::print(stderr, "[data] {}\n", line); };
  NotesResult r = write_notes(store, recipe, a.notes, options);
  if (a.json) {
    ordered_json j = {{"recipe", recipe.to_json()}, {"dry_run", a.dry_run}};
    j.update(r.to_json());
    fmt::print("{}\n", j.dump(2, ' ', false, ordered_json::error_handler_t::replace));
  } else {
    fmt::print("{}", describe_notes(recipe, r, a.dry_run));
    if (a.dry_run) fmt::print("(dry run: no teacher called, nothing written)\n");
  }
  return 0;
}

int show_command(const DataArgs& a) {
  fmt::print("{}", describe_dataset(a.dir));
  return 0;
}

}  // namespace

void register_data(CLI::App& app, Action& action) {
  static DataArgs a;
  auto* cmd = app.add_subcommand("data", "fine-tuning data (fixit, kernelgen chat JSONL) and repair notes from stored runs, by recipe (docs/adaptation.md)");
  cmd->require_subcommand(1);
  auto* build = cmd->add_subcommand("build", "build a dataset folder from a recipe: train/eval JSONL, manifest, composition page");
  build->add_option("recipe", a.recipe, "recipe JSON (configs/recipes/*.json)")->required()->check(CLI::ExistingFile);
  build->add_option("--store", a.store, "run store (SQLite)")->capture_default_str();
  build->add_option("--out", a.out, "dataset folder (created; its files replaced, its reasoning cache kept)");
  build->add_flag("--dry-run", a.dry_run, "print what the recipe selects (runs, strata, pairs) without calling the teacher or writing");
  build->add_flag("--json", a.json, "print the manifest (or, with --dry-run, the selection) as JSON");
  build->footer("The same store, recipe and reasoning cache give byte-identical files. Held-out definitions are never\n"
                "read; a recipe that lists one in its problem set is refused (exit 2).");
  build->callback([&action] { action = [] { return build_command(a); }; });
  auto* show = cmd->add_subcommand("show", "summarise a dataset folder's manifest and check its files' hashes");
  show->add_option("dir", a.dir, "dataset folder")->required();
  show->callback([&action] { action = [] { return show_command(a); }; });
  auto* notes = cmd->add_subcommand("notes", "write repair notes: a teacher's note on each wrong->fixed pair of a recipe, into a notes store");
  notes->add_option("recipe", a.recipe, "recipe JSON of kind fixit, with a teacher (configs/recipes/notes_example.json)")
      ->required()
      ->check(CLI::ExistingFile);
  notes->add_option("--notes", a.notes, "notes store (SQLite; created with its folder when absent)")->required();
  notes->add_option("--store", a.store, "run store (SQLite)")->capture_default_str();
  notes->add_option("--cache", a.cache, "folder of the teacher's answers (default: note_cache/ beside the notes store)");
  notes->add_flag("--dry-run", a.dry_run, "print the pairs and how many would be asked, without calling the teacher or writing");
  notes->add_flag("--json", a.json, "print the selection and note counts as JSON");
  notes->footer("One note per pair: pairs the store already has a note of are skipped, so running again adds none.\n"
                "Held-out definitions are never read and never get a note. Answers are cached by teacher and prompt.");
  notes->callback([&action] { action = [] { return notes_command(a); }; });
}

}  // namespace ptxbench::cli
