#include "adapt/dataset_builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <mutex>
#include <set>

#include "adapt/teacher_call.h"
#include "common/sha256.h"
#include "report/report_html.h"

#ifndef PTXBENCH_VERSION
#define PTXBENCH_VERSION "dev"
#endif

namespace ptxbench {
namespace {

constexpr const char* kTrainFile = "train.jsonl";
constexpr const char* kEvalFile = "eval.jsonl";
constexpr const char* kManifestFile = "manifest.json";
constexpr const char* kCompositionFile = "composition.html";
constexpr const char* kDatasetInfoFile = "dataset_info.json";
constexpr const char* kCacheDir = "reasoning_cache";

/// The share dimensions of the manifest, in order.
constexpr const char* kDimensions[] = {"definition", "label", "turn", "prompt_tag"};

std::vector<PlanRun> resolve_runs(const RunStore& store, const DataRecipe& recipe) {
  std::set<std::string> ids;
  if (recipe.all_runs) {
    for (const auto& r : store.list_runs())
      if (!r.imported()) ids.insert(r.id);
    if (ids.empty()) throw InputError("data", "the store " + store.path() + " holds no measured run");
  } else {
    ids.insert(recipe.runs.begin(), recipe.runs.end());
  }
  std::vector<PlanRun> out;
  for (const auto& id : ids) out.push_back({id, "", 0});
  return out;
}

std::string json_text(const ordered_json& j, int indent = 2) {
  return j.dump(indent, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

double round4(double x) { return std::round(x * 10000.0) / 10000.0; }

/// The dimension's key of a record: definition, label key, turn (the wrong turn for fixit), tag.
std::string record_key(const SftRecord& r, std::string_view dimension) {
  if (dimension == "definition") return r.meta.key.definition;
  if (dimension == "label") return r.meta.label;
  if (dimension == "turn") return std::to_string(r.meta.wrong_turn.value_or(r.meta.turn));
  return r.meta.key.prompt_tag;
}

ordered_json shares(const std::vector<const SftRecord*>& train, const std::vector<const SftRecord*>& eval) {
  ordered_json out = ordered_json::object();
  double total = static_cast<double>(train.size() + eval.size());
  for (const char* dim : kDimensions) {
    std::map<std::string, std::pair<int64_t, int64_t>> counts;  // key -> (train, eval)
    for (const auto* r : train) ++counts[record_key(*r, dim)].first;
    for (const auto* r : eval) ++counts[record_key(*r, dim)].second;
    std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> rows(counts.begin(), counts.end());
    if (std::string_view(dim) == "turn")
      std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return std::stoll(a.first) < std::stoll(b.first); });
    ordered_json list = ordered_json::array();
    for (const auto& [key, c] : rows) {
      int64_t n = c.first + c.second;
      ordered_json row = {{"key", key}};
      if (std::string_view(dim) == "label") row["name"] = report::label_name(parse_label_key(key));
      row["records"] = n;
      row["share"] = total > 0 ? round4(static_cast<double>(n) / total) : 0.0;
      row["train"] = c.first;
      row["eval"] = c.second;
      list.push_back(row);
    }
    out[dim] = list;
  }
  return out;
}

ordered_json file_entry(const std::string& content, std::optional<int64_t> records) {
  ordered_json j = ordered_json::object();
  if (records) j["records"] = *records;
  j["bytes"] = static_cast<int64_t>(content.size());
  j["sha256"] = sha256_hex(content);
  return j;
}

ordered_json dataset_info(const std::string& name) {
  ordered_json tags = {{"role_tag", "role"},         {"content_tag", "content"}, {"user_tag", "user"},
                       {"assistant_tag", "assistant"}, {"system_tag", "system"}};
  auto entry = [&](const char* file) {
    return ordered_json{{"file_name", file}, {"formatting", "sharegpt"}, {"columns", {{"messages", "messages"}}}, {"tags", tags}};
  };
  return {{name + "_train", entry(kTrainFile)}, {name + "_eval", entry(kEvalFile)}};
}

// ---- build steps

/// The teacher's reasoning for each item of the plan, concurrently; results land by index so the
/// order never depends on timing. Empty results without a teacher. Counts result.teacher_calls.
std::vector<std::optional<SynthesisResult>> synthesize_reasoning(BuildResult& result, const DataRecipe& recipe,
                                                                 const fs::path& out_dir, const BuildOptions& options) {
  const DatasetPlan& plan = result.plan;
  const bool fixit = recipe.kind == RecordKind::fixit;
  const std::size_t n = fixit ? plan.fixit.size() : plan.kernelgen.size();
  std::vector<std::optional<SynthesisResult>> synthesized(n);
  if (!recipe.teacher) return synthesized;
  std::unique_ptr<ModelClient> owned;
  ModelClient* client = options.teacher;
  if (client == nullptr) {
    owned = make_model_client(*recipe.teacher);
    client = owned.get();
  }
  ReasoningSynthesizer synth(*client, recipe.teacher->model, recipe.reasoning, out_dir / kCacheDir);
  std::mutex progress_mutex;
  std::atomic<std::size_t> done{0};
  for_each_request(n, recipe.reasoning.concurrency, [&](std::size_t i) {
    ReasoningRequest request = fixit ? reasoning_request(plan.fixit[i]) : reasoning_request(plan.kernelgen[i]);
    synthesized[i] = synth.synthesize(request);
    std::size_t k = ++done;
    if (options.progress) {
      std::lock_guard lock(progress_mutex);
      options.progress(fmt::format("reasoning {}/{}", k, n));
    }
  });
  result.teacher_calls = synth.calls();
  return synthesized;
}

/// The teacher's attempts over all items, and the items whose reasoning was accepted.
struct ReasoningTally {
  int64_t attempts = 0, accepted = 0;
};

/// Records, in the plan's canonical order; the held-out guard is checked again by each builder. An
/// item whose reasoning was rejected is dropped (counted in result.reasoning_rejected).
std::vector<SftRecord> build_records(BuildResult& result, const DataRecipe& recipe,
                                     const std::vector<std::optional<SynthesisResult>>& synthesized, ReasoningTally& tally) {
  const DatasetPlan& plan = result.plan;
  const bool fixit = recipe.kind == RecordKind::fixit;
  const HeldOutDefinitions held_out = recipe.held_out_set();
  std::vector<SftRecord> records;
  for (std::size_t i = 0; i < synthesized.size(); ++i) {
    std::optional<RecordReasoning> reasoning;
    if (synthesized[i]) {
      const auto& s = *synthesized[i];
      result.cache_hits += s.from_cache;
      tally.attempts += s.attempts;
      if (!s.accepted) {
        ++result.reasoning_rejected;
        continue;
      }
      ++tally.accepted;
      reasoning = RecordReasoning{s.reasoning, s.teacher_model, s.attempts};
    }
    records.push_back(fixit ? fixit_record(plan.fixit[i], reasoning, held_out)
                            : kernelgen_record(plan.kernelgen[i], reasoning, held_out));
  }
  return records;
}

/// The records split by trajectory: no trajectory on both sides.
struct TrajectorySplit {
  std::vector<const SftRecord*> train, eval;
  std::size_t trajectories = 0, eval_trajectories = 0;
};

TrajectorySplit split_by_trajectory(const std::vector<SftRecord>& records, const DataRecipe& recipe) {
  std::map<std::pair<std::string, int64_t>, std::size_t> group_of;
  std::vector<std::size_t> record_group;
  for (const auto& r : records) {
    auto key = std::make_pair(r.meta.run_id, r.meta.trajectory_id);
    auto it = group_of.emplace(key, group_of.size()).first;
    record_group.push_back(it->second);
  }
  TrajectorySplit split;
  const std::size_t groups = split.trajectories = group_of.size();
  auto n_eval = static_cast<std::size_t>(std::llround(recipe.eval_fraction * static_cast<double>(groups)));
  if (groups > 0 && n_eval >= groups) n_eval = groups - 1;
  split.eval_trajectories = n_eval;
  std::vector<bool> eval_group(groups, false);
  auto group_order = seeded_permutation(groups, derive_seed(recipe.shuffle_seed, "split"));
  for (std::size_t k = 0; k < n_eval; ++k) eval_group[group_order[k]] = true;
  for (std::size_t i = 0; i < records.size(); ++i)
    (eval_group[record_group[i]] ? split.eval : split.train).push_back(&records[i]);
  return split;
}

/// The text of the three data files.
struct DatasetFiles {
  std::string train, eval, info;
};

ordered_json dataset_manifest(const DataRecipe& recipe, const BuildResult& result, const ReasoningTally& tally,
                              const TrajectorySplit& split, const DatasetFiles& files) {
  ordered_json m = {{"schema", kDatasetManifestSchema}, {"schema_version", kDatasetManifestVersion}};
  m["name"] = recipe.name;
  m["kind"] = to_string(recipe.kind);
  m["ptxbench_version"] = PTXBENCH_VERSION;
  m["recipe_sha256"] = recipe.sha256();
  m["recipe"] = recipe.to_json();
  m["loss_mask"] = kLossMaskConvention;
  m["selection"] = result.plan.to_json();
  if (recipe.teacher)
    m["reasoning"] = {{"teacher_model", recipe.teacher->model},
                      {"prompt_version", kReasoningPromptVersion},
                      {"limits", recipe.reasoning.to_json()},
                      {"accepted", tally.accepted},
                      {"rejected", result.reasoning_rejected},
                      {"teacher_calls", tally.attempts}};
  else
    m["reasoning"] = nullptr;
  m["records"] = {{"total", result.records}, {"train", result.train}, {"eval", result.eval}};
  m["split"] = {{"by", "trajectory"},
                {"eval_fraction", recipe.eval_fraction},
                {"trajectories", static_cast<int64_t>(split.trajectories)},
                {"eval_trajectories", static_cast<int64_t>(split.eval_trajectories)}};
  m["shares"] = shares(split.train, split.eval);
  m["files"] = {{kTrainFile, file_entry(files.train, result.train)},
                {kEvalFile, file_entry(files.eval, result.eval)},
                {kDatasetInfoFile, file_entry(files.info, std::nullopt)}};
  return m;
}

}  // namespace

// ---- plan

ordered_json DatasetPlan::to_json() const {
  ordered_json runs_json = ordered_json::array();
  for (const auto& r : runs) runs_json.push_back({{"run", r.id}, {"model", r.model}, {"trajectories_read", r.trajectories}});
  ordered_json j = {{"runs", runs_json}, {"sources", sources.to_json()}, {"missing_definitions", missing_definitions}};
  if (kind == RecordKind::fixit) {
    j["failed_turns"] = failed_turns;
    j["pairs"] = pairs.to_json();
  } else {
    j["kernels"] = kernels.to_json();
  }
  j["strata"] = ptxbench::to_json(strata);
  j["kept"] = static_cast<int64_t>(fixit.size() + kernelgen.size());
  return j;
}

DatasetPlan plan_dataset(const RunStore& store, const DataRecipe& recipe) {
  DatasetPlan plan;
  plan.kind = recipe.kind;
  plan.runs = resolve_runs(store, recipe);
  SourceFilter filter;
  for (const auto& r : plan.runs) filter.runs.push_back(r.id);
  filter.definitions = recipe.definitions();
  filter.allow_fake_verdicts = recipe.allow_fake_verdicts;
  SourceSet sources = read_sources(store, filter, recipe.held_out_set());
  plan.sources = sources.counts;
  for (auto& r : plan.runs) {
    r.model = store.run(r.id).model;
    r.trajectories = std::count_if(sources.trajectories.begin(), sources.trajectories.end(),
                                   [&](const SourceTrajectory& t) { return t.run_id == r.id; });
  }
  if (filter.definitions) {
    std::set<std::string> present;
    for (const auto& t : sources.trajectories) present.insert(t.definition());
    for (const auto& d : *filter.definitions)
      if (!present.count(d)) plan.missing_definitions.push_back(d);
  }
  std::optional<int64_t> cap = recipe.balance == BalanceMode::none ? std::nullopt : recipe.cap_per_stratum;
  uint64_t seed = recipe.shuffle_seed;

  if (recipe.kind == RecordKind::fixit) {
    TurnFilter turns{recipe.turn_from, recipe.turn_to, recipe.labels, recipe.pairs_from};
    auto failed = select_failed_turns(sources, turns);
    plan.failed_turns = static_cast<int64_t>(failed.size());
    auto stratum = [&](const std::string& definition, report::TurnLabel label) {
      return Stratum{definition, recipe.balance_strata == BalanceStrata::definition ? "any" : report::label_key(label)};
    };
    if (recipe.balance == BalanceMode::pre) {
      std::vector<Stratum> strata;
      for (const auto& f : failed) strata.push_back(stratum(f.definition, f.label));
      BalanceResult b = balance_strata(strata, cap, seed);
      plan.strata = b.strata;
      std::vector<FailedTurn> kept;
      for (auto i : b.kept) kept.push_back(failed[i]);
      PairSet pairs = repair_pairs(sources, kept, recipe.fixes);
      plan.pairs = pairs.counts;
      plan.fixit = std::move(pairs.pairs);
    } else {
      PairSet pairs = repair_pairs(sources, failed, recipe.fixes);
      std::vector<Stratum> strata;
      std::vector<double> speedups;
      for (const auto& p : pairs.pairs) {
        strata.push_back(stratum(p.definition(), p.wrong_label));
        speedups.push_back(p.fixed_speedup.value_or(0.0));
      }
      BalanceResult b = recipe.balance_keep == BalanceKeep::fastest ? balance_strata_by_rank(strata, cap, speedups)
                                                                    : balance_strata(strata, cap, seed);
      plan.strata = b.strata;
      plan.pairs = pairs.counts;
      for (auto i : b.kept) plan.fixit.push_back(pairs.pairs[i]);
    }
  } else {
    KernelSet kernels = correct_kernels(sources, recipe.turn_from, recipe.turn_to);
    BalanceResult b = balance_strata(kernels.strata, cap, seed);
    plan.strata = b.strata;
    plan.kernels = kernels.counts;
    for (auto i : b.kept) plan.kernelgen.push_back(kernels.kernels[i]);
  }
  return plan;
}

std::string describe_plan(const DataRecipe& recipe, const DatasetPlan& plan) {
  std::string out = fmt::format("recipe {} ({}), shuffle seed {}, recipe sha256 {}\n", recipe.name, to_string(recipe.kind),
                                recipe.shuffle_seed, recipe.sha256().substr(0, 16));
  for (const auto& r : plan.runs) out += fmt::format("run {}  model {}  trajectories read {}\n", r.id, r.model, r.trajectories);
  out += fmt::format("trajectories: read {}, held out (never read) {}, outside the problem set {}\n",
                     plan.sources.trajectories_read, plan.sources.held_out_skipped, plan.sources.outside_problem_set);
  if (!plan.missing_definitions.empty()) {
    std::string names;
    for (const auto& d : plan.missing_definitions) names += (names.empty() ? "" : ", ") + d;
    out += "problem-set definitions without any trajectory in these runs: " + names + "\n";
  }
  if (recipe.kind == RecordKind::fixit) {
    std::string labels;
    for (auto l : recipe.labels) labels += (labels.empty() ? "" : ",") + report::label_key(l);
    out += fmt::format("failed turns ({}; turns {}..{}): {}\n", labels, recipe.turn_from,
                       recipe.turn_to == std::numeric_limits<int64_t>::max() ? std::string("last") : std::to_string(recipe.turn_to),
                       plan.failed_turns);
  } else {
    out += fmt::format("correct kernels: {} PASSED + target-instruction turns, {} duplicates, {} kernels\n",
                       plan.kernels.correct_turns, plan.kernels.duplicates, plan.kernels.kernels);
  }
  std::string stage = recipe.kind == RecordKind::kernelgen ? "kernels"
                      : recipe.balance == BalanceMode::pre ? "failed turns" : "pairs";
  out += fmt::format("balance {}{} (strata of {}):\n", to_string(recipe.balance),
                     recipe.cap_per_stratum ? fmt::format(", cap {} per stratum", *recipe.cap_per_stratum) : "", stage);
  std::size_t width = 10;
  for (const auto& s : plan.strata) width = std::max(width, s.stratum.definition.size());
  out += fmt::format("  {:<{}}  {:<18}  {:>9}  {:>6}\n", "definition", width, "label", "available", "kept");
  for (const auto& s : plan.strata)
    out += fmt::format("  {:<{}}  {:<18}  {:>9}  {:>6}\n", s.stratum.definition, width, s.stratum.label, s.available, s.kept);
  if (recipe.kind == RecordKind::fixit)
    out += fmt::format("pairs: from {} failed turns: {} without a fix, {} without feedback, {} same kernel, {} duplicates "
                       "-> {} pairs; kept {}\n",
                       plan.pairs.failed_turns, plan.pairs.no_fix, plan.pairs.no_feedback, plan.pairs.same_kernel,
                       plan.pairs.duplicates, plan.pairs.pairs, plan.fixit.size());
  else
    out += fmt::format("kernels kept: {}\n", plan.kernelgen.size());
  out += recipe.teacher ? fmt::format("teacher: {} at {} ({} items to reason about)\n", recipe.teacher->model,
                                      recipe.teacher->base_url, plan.fixit.size() + plan.kernelgen.size())
                        : std::string("teacher: none (records without reasoning)\n");
  return out;
}

// ---- build

BuildResult build_dataset(const RunStore& store, const DataRecipe& recipe, const fs::path& out_dir,
                          const BuildOptions& options) {
  BuildResult result;
  result.plan = plan_dataset(store, recipe);
  fs::create_directories(out_dir);
  const std::vector<std::optional<SynthesisResult>> synthesized = synthesize_reasoning(result, recipe, out_dir, options);
  ReasoningTally tally;
  const std::vector<SftRecord> records = build_records(result, recipe, synthesized, tally);
  const TrajectorySplit split = split_by_trajectory(records, recipe);
  auto shuffled = [&](const std::vector<const SftRecord*>& side, const char* purpose) {
    auto order = seeded_permutation(side.size(), derive_seed(recipe.shuffle_seed, purpose));
    std::string text;
    for (auto k : order) text += side[k]->jsonl_line();
    return text;
  };
  DatasetFiles files{shuffled(split.train, "order/train"), shuffled(split.eval, "order/eval"),
                     json_text(dataset_info(recipe.name))};

  result.records = static_cast<int64_t>(records.size());
  result.train = static_cast<int64_t>(split.train.size());
  result.eval = static_cast<int64_t>(split.eval.size());
  result.manifest = dataset_manifest(recipe, result, tally, split, files);

  write_file_atomic(out_dir / kTrainFile, files.train);
  write_file_atomic(out_dir / kEvalFile, files.eval);
  write_file_atomic(out_dir / kDatasetInfoFile, files.info);
  write_file_atomic(out_dir / kCompositionFile, render_composition_html(result.manifest));
  write_file_atomic(out_dir / kManifestFile, json_text(result.manifest));  // last: its presence marks a complete folder
  return result;
}

// ---- data show

std::string describe_dataset(const fs::path& dir) {
  fs::path manifest_path = dir / kManifestFile;
  if (!fs::exists(manifest_path)) throw InputError("data", "no " + std::string(kManifestFile) + " in " + dir.string());
  JsonChecker check(manifest_path.string());
  ordered_json m = check.parse(read_file(manifest_path));
  if (!m.is_object() || m.value("schema", "") != kDatasetManifestSchema)
    throw InputError("data", manifest_path.string() + " is no ptxbench dataset manifest (schema " + kDatasetManifestSchema + ")");
  const auto& rec = m.value("records", ordered_json::object());
  const auto& reasoning = m.value("reasoning", ordered_json());
  std::string out = fmt::format("dataset {} ({}), ptxbench {}, recipe sha256 {}\n", m.value("name", ""), m.value("kind", ""),
                                m.value("ptxbench_version", ""), m.value("recipe_sha256", "").substr(0, 16));
  out += fmt::format("records: {} (train {}, eval {}); teacher: {}\n", rec.value("total", int64_t{0}),
                     rec.value("train", int64_t{0}), rec.value("eval", int64_t{0}),
                     reasoning.is_object() ? fmt::format("{} ({} accepted, {} rejected)", reasoning.value("teacher_model", ""),
                                                         reasoning.value("accepted", int64_t{0}), reasoning.value("rejected", int64_t{0}))
                                           : std::string("none"));
  const auto& sel = m.value("selection", ordered_json::object());
  for (const auto& r : sel.value("runs", ordered_json::array()))
    out += fmt::format("source run {}  model {}  trajectories read {}\n", r.value("run", ""), r.value("model", ""),
                       r.value("trajectories_read", int64_t{0}));
  const auto& sh = m.value("shares", ordered_json::object());
  const double total = static_cast<double>(rec.value("total", int64_t{0}));
  for (const char* dim : kDimensions) {
    out += fmt::format("share per {}:\n", dim);
    for (const auto& row : sh.value(dim, ordered_json::array())) {
      auto n = row.value("records", int64_t{0});
      out += fmt::format("  {:<28} {:>6}  {:>6.1f}%  (train {}, eval {})\n", row.value("key", ""), n,
                         total > 0 ? 100.0 * static_cast<double>(n) / total : 0.0, row.value("train", int64_t{0}),
                         row.value("eval", int64_t{0}));
    }
  }
  out += "files:\n";
  const ordered_json files = m.value("files", ordered_json::object());
  for (const auto& [file, entry] : files.items()) {
    fs::path p = dir / file;
    std::string state = !fs::exists(p)                                                   ? "MISSING"
                        : sha256_hex(read_file(p)) == entry.value("sha256", std::string()) ? "sha256 ok"
                                                                                         : "CHANGED since the build";
    out += fmt::format("  {:<18} {}\n", file, state);
  }
  return out;
}

}  // namespace ptxbench
