// `ptxbench data build RECIPE.json [--store FILE] --out DIR [--dry-run] [--json]`, `ptxbench data
// seeds --from RUN --out FILE`, `ptxbench data show DIR` and `ptxbench data notes RECIPE.json --notes FILE [--store FILE] [--dry-run] [--json]`:
// fine-tuning datasets (fixit, kernelgen) and repair notes from stored runs, as a recipe says
// (docs/design.md §9; docs/adaptation.md).
#include <fmt/format.h>

#include <cstdio>

#include "adapt/data_recipe.h"
#include "adapt/dataset_builder.h"
#include "adapt/note_synthesis.h"
#include "adapt/seed_selection.h"
#include "cli/output_path.h"
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
  // data seeds
  std::vector<std::string> from, labels, definitions;
  int64_t per_definition = 33, turn_to = 5;
  std::optional<uint64_t> seed;
  bool allow_fake = false;
  bool no_teacher = false;  // data build: records without reasoning, whatever the recipe's teacher
};

int seeds_command(const DataArgs& a) {
  OutputFile out("--out", a.out);
  if (!fs::exists(a.store)) throw InputError("data", "no run store at " + a.store + " (--store FILE)");
  RunStore store(a.store, RunStore::Open::read_only);
  SourceFilter filter;
  filter.runs = a.from;
  if (!a.definitions.empty()) filter.definitions = a.definitions;
  filter.allow_fake_verdicts = a.allow_fake;
  SourceSet sources = read_sources(store, filter, HeldOutDefinitions::none());
  SeedRule rule;
  if (!a.labels.empty()) {
    rule.labels.clear();
    for (const auto& l : a.labels) rule.labels.push_back(parse_label_key(l));
  }
  rule.turn_to = a.turn_to;
  rule.per_definition = a.per_definition;
  rule.seed = a.seed;
  SeedSelection sel = select_seeds(sources, rule);
  std::string lines;
  for (const auto& f : sel.kept) lines += seed_line(sources, f, a.store).dump(-1, ' ', false, ordered_json::error_handler_t::replace) + "\n";
  out.write(lines);
  // The summary goes to stderr when the seeds go to stdout.
  std::FILE* info = out.to_stdout() ? stderr : stdout;
  if (a.json) {
    fmt::print(info, "{}\n", sel.to_json().dump(2));
    return 0;
  }
  fmt::print(info, "{} seeds from {} failed turns with a kernel and feedback (turns {}..{}, at most {} per definition{})\n",
             sel.kept.size(), sel.candidates, rule.turn_from, rule.turn_to, rule.per_definition,
             rule.seed ? fmt::format(", seeded choice {}", *rule.seed) : std::string(", stable order"));
  for (const auto& s : sel.strata)
    fmt::print(info, "  {:<32} {:<18} turn {:>2}: {:>3} of {:>3}\n", s.definition, s.label, s.turn, s.kept, s.available);
  for (const auto& d : sel.underfilled)
    fmt::print(info, "warning: {} has fewer than {} candidates: all of them are seeds\n", d, rule.per_definition);
  if (!out.to_stdout()) fmt::print(info, "written to {}\n", out.path());
  return 0;
}

int build_command(const DataArgs& a) {
  DataRecipe recipe = load_data_recipe(a.recipe);
  if (a.no_teacher) recipe.teacher.reset();  // the manifest's recipe says so: no teacher, no reasoning
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
  build->add_flag("--no-teacher", a.no_teacher,
                  "leave the recipe's teacher out: records without reasoning (counts, composition, or reasoning added elsewhere)");
  build->footer("The same store, recipe and reasoning cache give byte-identical files. Held-out definitions are never\n"
                "read; a recipe that lists one in its problem set is refused (exit 2).");
  build->callback([&action] { action = [] { return build_command(a); }; });
  auto* seeds = cmd->add_subcommand("seeds", "repair seeds from a stored run's failed turns, by the original PTXBench's rule (a repair run's repair_from file)");
  seeds->add_option("--from", a.from, "run id (repeat for several runs)")->required();
  seeds->add_option("--store", a.store, "run store (SQLite)")->capture_default_str();
  seeds->add_option("--out", a.out, "seeds file (JSONL; - for stdout)")->required();
  seeds->add_option("--per-definition", a.per_definition, "at most this many seeds per definition")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1000000}));
  seeds->add_option("--max-turn", a.turn_to, "latest turn a seed may come from (turns count from 1)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1000000}));
  seeds->add_option("--labels", a.labels, "failure labels (default: compilation_error numerical_error runtime_error kernel_timeout)");
  seeds->add_option("--definitions", a.definitions, "only these definitions (default: every definition of the runs)");
  seeds->add_option("--seed", a.seed, "choose within each (label, turn) stratum by a seeded permutation instead of the stable order");
  seeds->add_flag("--allow-fake-verdicts", a.allow_fake, "accept verdicts of the service's fake backend (tests only)");
  seeds->add_flag("--json", a.json, "print the selection (strata, counts) as JSON");
  seeds->footer("The paper's rule: failed turns labelled compilation, numerical, runtime error or kernel timeout at turns\n"
                "1..5 (the original's 0-based turn < 5), at most 33 per definition, apportioned over (label, turn) strata\n"
                "by largest remainder. Each line names its source (store, run, trajectory, turn); a repair run\n"
                "(repair_from) stores it as turn 0, and `data build` pairs it with the repair's first fix.");
  seeds->callback([&action] { action = [] { return seeds_command(a); }; });
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
