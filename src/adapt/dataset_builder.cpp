#include "adapt/dataset_builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <mutex>
#include <numbers>
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
    auto failed = select_failed_turns(sources, TurnFilter{recipe.turn_from, recipe.turn_to, recipe.labels});
    plan.failed_turns = static_cast<int64_t>(failed.size());
    if (recipe.balance == BalanceMode::pre) {
      std::vector<Stratum> strata;
      for (const auto& f : failed) strata.push_back({f.definition, report::label_key(f.label)});
      BalanceResult b = balance_strata(strata, cap, seed);
      plan.strata = b.strata;
      std::vector<FailedTurn> kept;
      for (auto i : b.kept) kept.push_back(failed[i]);
      PairSet pairs = repair_pairs(sources, kept);
      plan.pairs = pairs.counts;
      plan.fixit = std::move(pairs.pairs);
    } else {
      PairSet pairs = repair_pairs(sources, failed);
      BalanceResult b = balance_strata(pairs.strata, cap, seed);
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
  const DatasetPlan& plan = result.plan;
  const bool fixit = recipe.kind == RecordKind::fixit;
  const std::size_t n = fixit ? plan.fixit.size() : plan.kernelgen.size();
  fs::create_directories(out_dir);

  // Reasoning, concurrently; results land by index so the order never depends on timing.
  std::vector<std::optional<SynthesisResult>> synthesized(n);
  int64_t attempts_total = 0, accepted = 0;
  if (recipe.teacher) {
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
  }

  // Records, in the plan's canonical order; the held-out guard is checked again by each builder.
  const HeldOutDefinitions held_out = recipe.held_out_set();
  std::vector<SftRecord> records;
  for (std::size_t i = 0; i < n; ++i) {
    std::optional<RecordReasoning> reasoning;
    if (synthesized[i]) {
      const auto& s = *synthesized[i];
      result.cache_hits += s.from_cache;
      attempts_total += s.attempts;
      if (!s.accepted) {
        ++result.reasoning_rejected;
        continue;
      }
      ++accepted;
      reasoning = RecordReasoning{s.reasoning, s.teacher_model, s.attempts};
    }
    records.push_back(fixit ? fixit_record(plan.fixit[i], reasoning, held_out)
                            : kernelgen_record(plan.kernelgen[i], reasoning, held_out));
  }

  // Split by trajectory (no trajectory on both sides), then a seeded order within each side.
  std::map<std::pair<std::string, int64_t>, std::size_t> group_of;
  std::vector<std::size_t> record_group;
  for (const auto& r : records) {
    auto key = std::make_pair(r.meta.run_id, r.meta.trajectory_id);
    auto it = group_of.emplace(key, group_of.size()).first;
    record_group.push_back(it->second);
  }
  const std::size_t groups = group_of.size();
  auto n_eval = static_cast<std::size_t>(std::llround(recipe.eval_fraction * static_cast<double>(groups)));
  if (groups > 0 && n_eval >= groups) n_eval = groups - 1;
  std::vector<bool> eval_group(groups, false);
  auto group_order = seeded_permutation(groups, derive_seed(recipe.shuffle_seed, "split"));
  for (std::size_t k = 0; k < n_eval; ++k) eval_group[group_order[k]] = true;
  std::vector<const SftRecord*> train, eval;
  for (std::size_t i = 0; i < records.size(); ++i) (eval_group[record_group[i]] ? eval : train).push_back(&records[i]);
  auto shuffled = [&](const std::vector<const SftRecord*>& side, const char* purpose) {
    auto order = seeded_permutation(side.size(), derive_seed(recipe.shuffle_seed, purpose));
    std::string text;
    for (auto k : order) text += side[k]->jsonl_line();
    return text;
  };
  std::string train_text = shuffled(train, "order/train"), eval_text = shuffled(eval, "order/eval");
  std::string info_text = json_text(dataset_info(recipe.name));

  result.records = static_cast<int64_t>(records.size());
  result.train = static_cast<int64_t>(train.size());
  result.eval = static_cast<int64_t>(eval.size());

  ordered_json m = {{"schema", kDatasetManifestSchema}, {"schema_version", kDatasetManifestVersion}};
  m["name"] = recipe.name;
  m["kind"] = to_string(recipe.kind);
  m["ptxbench_version"] = PTXBENCH_VERSION;
  m["recipe_sha256"] = recipe.sha256();
  m["recipe"] = recipe.to_json();
  m["loss_mask"] = kLossMaskConvention;
  m["selection"] = plan.to_json();
  if (recipe.teacher)
    m["reasoning"] = {{"teacher_model", recipe.teacher->model},
                      {"prompt_version", kReasoningPromptVersion},
                      {"limits", recipe.reasoning.to_json()},
                      {"accepted", accepted},
                      {"rejected", result.reasoning_rejected},
                      {"teacher_calls", attempts_total}};
  else
    m["reasoning"] = nullptr;
  m["records"] = {{"total", result.records}, {"train", result.train}, {"eval", result.eval}};
  m["split"] = {{"by", "trajectory"},
                {"eval_fraction", recipe.eval_fraction},
                {"trajectories", static_cast<int64_t>(groups)},
                {"eval_trajectories", static_cast<int64_t>(n_eval)}};
  m["shares"] = shares(train, eval);
  m["files"] = {{kTrainFile, file_entry(train_text, result.train)},
                {kEvalFile, file_entry(eval_text, result.eval)},
                {kDatasetInfoFile, file_entry(info_text, std::nullopt)}};
  result.manifest = m;

  write_file_atomic(out_dir / kTrainFile, train_text);
  write_file_atomic(out_dir / kEvalFile, eval_text);
  write_file_atomic(out_dir / kDatasetInfoFile, info_text);
  write_file_atomic(out_dir / kCompositionFile, render_composition_html(m));
  write_file_atomic(out_dir / kManifestFile, json_text(m));  // last: its presence marks a complete folder
  return result;
}

// ---- composition.html

namespace {

using report::html_escape;

std::string compact(const ordered_json& j) { return j.dump(-1, ' ', false, ordered_json::error_handler_t::replace); }

constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

/// The report's colours for the turn labels (report_html.cpp), so the two pages agree.
std::string label_color(const std::string& key) {
  static const std::map<std::string, std::string> kColors = {
      {"correct", "#2ca02c"},          {"numerical_error", "#ff7f0e"}, {"compilation_error", "#d62728"},
      {"runtime_error", "#9467bd"},    {"sanitize_timeout", "#8c564b"}, {"kernel_timeout", "#e377c2"},
      {"service_timeout", "#bcbd22"},  {"extraction_error", "#7f7f7f"}, {"other", "#17becf"},
      {"infra_error", "#c7c7c7"}};
  auto it = kColors.find(key);
  return it == kColors.end() ? "#17becf" : it->second;
}

struct Slice {
  std::string label;
  int64_t count = 0;
  std::string color;
};

std::vector<Slice> slices_of(const ordered_json& rows, bool labels) {
  std::vector<Slice> out;
  std::size_t i = 0;
  for (const auto& row : rows) {
    std::string key = row.value("key", "");
    std::string name = labels ? row.value("name", key) : key;
    out.push_back({name, row.value("records", int64_t{0}), labels ? label_color(key) : kPalette[i % std::size(kPalette)]});
    ++i;
  }
  return out;
}

std::string pie_svg(const std::vector<Slice>& slices, const std::string& title) {
  constexpr double cx = 110, cy = 110, r = 100;
  int64_t total = 0;
  for (const auto& s : slices) total += s.count;
  std::string svg = fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="220" height="220" viewBox="0 0 220 220" role="img" aria-label="{}">)",
                                html_escape(title));
  if (total == 0) return svg + R"(<circle cx="110" cy="110" r="100" fill="#eee"/></svg>)";
  double angle = -std::numbers::pi / 2;
  for (const auto& s : slices) {
    if (s.count == 0) continue;
    double share = static_cast<double>(s.count) / static_cast<double>(total);
    std::string tip = fmt::format("<title>{}: {} ({:.1f}%)</title>", html_escape(s.label), s.count, 100 * share);
    if (s.count == total) {
      svg += fmt::format(R"(<circle cx="{:.3f}" cy="{:.3f}" r="{:.3f}" fill="{}" stroke="#fff">{}</circle>)", cx, cy, r, s.color, tip);
      break;
    }
    double end = angle + share * 2 * std::numbers::pi;
    svg += fmt::format(R"(<path d="M{:.3f},{:.3f} L{:.3f},{:.3f} A{:.3f},{:.3f} 0 {} 1 {:.3f},{:.3f} Z" fill="{}" stroke="#fff">{}</path>)",
                       cx, cy, cx + r * std::cos(angle), cy + r * std::sin(angle), r, r, share > 0.5 ? 1 : 0,
                       cx + r * std::cos(end), cy + r * std::sin(end), s.color, tip);
    angle = end;
  }
  return svg + "</svg>";
}

std::string bars_svg(const std::vector<Slice>& slices, const std::string& title) {
  constexpr int gap = 10, height = 160, left = 36, bottom = 24;
  constexpr std::size_t kMaxLabel = 12;  // characters under a bar; longer names are cut (the table has them whole)
  int64_t max = 1;
  std::size_t longest = 1;
  for (const auto& s : slices) {
    max = std::max(max, s.count);
    longest = std::max(longest, std::min(kMaxLabel, s.label.size()));
  }
  const int bar = std::clamp(static_cast<int>(7 * longest) + 4, 34, 92);
  int width = left + static_cast<int>(slices.size()) * (bar + gap) + gap;
  std::string svg = fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" role="img" aria-label="{2}">)",
                                width, height + bottom + 8, html_escape(title));
  svg += fmt::format(R"(<line x1="{0}" y1="8" x2="{0}" y2="{1}" stroke="#888"/><line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="#888"/>)",
                     left, height + 8, width);
  svg += fmt::format(R"(<text x="{}" y="16" font-size="11" text-anchor="end">{}</text>)", left - 4, max);
  for (std::size_t i = 0; i < slices.size(); ++i) {
    const auto& s = slices[i];
    double h = static_cast<double>(height) * static_cast<double>(s.count) / static_cast<double>(max);
    int x = left + gap + static_cast<int>(i) * (bar + gap);
    svg += fmt::format(R"(<rect x="{}" y="{:.3f}" width="{}" height="{:.3f}" fill="{}"><title>{}: {}</title></rect>)", x,
                       8 + height - h, bar, h, s.color, html_escape(s.label), s.count);
    svg += fmt::format(R"(<text x="{}" y="{}" font-size="11" text-anchor="middle">{}</text>)", x + bar / 2, height + 22,
                       html_escape(s.label.size() > kMaxLabel ? s.label.substr(0, kMaxLabel - 1) + "…" : s.label));
  }
  return svg + "</svg>";
}

std::string share_table(const ordered_json& rows, const std::vector<Slice>& slices) {
  int64_t total = 0;
  for (const auto& s : slices) total += s.count;
  std::string t = R"(<table><tr><th></th><th>key</th><th class="num">records</th><th class="num">share</th><th class="num">train</th><th class="num">eval</th></tr>)";
  std::size_t i = 0;
  for (const auto& row : rows) {
    t += fmt::format(R"(<tr><td><span class="sw" style="background:{}"></span></td><td>{}</td><td class="num">{}</td><td class="num">{:.1f}%</td><td class="num">{}</td><td class="num">{}</td></tr>)",
                     slices[i].color, html_escape(slices[i].label), slices[i].count,
                     total > 0 ? 100.0 * static_cast<double>(slices[i].count) / static_cast<double>(total) : 0.0,
                     row.value("train", int64_t{0}), row.value("eval", int64_t{0}));
    ++i;
  }
  return t + "</table>";
}

}  // namespace

std::string render_composition_html(const ordered_json& m) {
  std::string name = m.value("name", "");
  std::string h = R"(<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">)"
                  R"(<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">)";
  h += "<title>Dataset composition: " + html_escape(name) + "</title><style>"
       "body{font:14px/1.45 system-ui,-apple-system,\"Segoe UI\",sans-serif;margin:0 auto;max-width:1200px;padding:16px 24px;color:#1b1b1b}"
       "table{border-collapse:collapse;margin:6px 0 10px}th,td{border:1px solid #d8d8d8;padding:3px 8px;text-align:left}"
       "th{background:#f3f5f7}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}"
       ".charts{display:flex;flex-wrap:wrap;gap:18px}.chart{border:1px solid #e2e2e2;border-radius:4px;padding:8px}"
       ".sw{display:inline-block;width:12px;height:12px;border-radius:2px}code{font-size:12px}"
       "</style></head><body>";
  const auto& rec = m.value("records", ordered_json::object());
  const auto& recipe = m.value("recipe", ordered_json::object());
  h += "<h1>Dataset composition: " + html_escape(name) + "</h1>";
  h += "<table>";
  auto row = [&](const std::string& k, const std::string& v) { h += "<tr><th>" + k + "</th><td>" + v + "</td></tr>"; };
  row("kind", html_escape(m.value("kind", "")));
  row("records", fmt::format("{} (train {}, eval {})", rec.value("total", int64_t{0}), rec.value("train", int64_t{0}),
                             rec.value("eval", int64_t{0})));
  row("recipe sha256", "<code>" + html_escape(m.value("recipe_sha256", "")) + "</code>");
  row("problem set", html_escape(recipe.contains("problem_set") ? compact(recipe["problem_set"]) : ""));
  row("held out", html_escape(recipe.contains("held_out") ? compact(recipe["held_out"]) : "[]"));
  row("balance", html_escape(recipe.contains("balance") ? compact(recipe["balance"]) : ""));
  row("shuffle seed", html_escape(recipe.contains("shuffle_seed") ? compact(recipe["shuffle_seed"]) : ""));
  const auto& reasoning = m.value("reasoning", ordered_json());
  row("teacher", reasoning.is_object() ? html_escape(reasoning.value("teacher_model", "")) : "none (no reasoning)");
  row("loss mask", html_escape(m.value("loss_mask", "")));
  row("ptxbench", html_escape(m.value("ptxbench_version", "")));
  h += "</table>";

  const auto& sh = m.value("shares", ordered_json::object());
  const std::pair<const char*, const char*> sections[] = {
      {"definition", "Share per problem"}, {"label", "Share per label"}, {"turn", "Share per turn"}, {"prompt_tag", "Share per prompt tag"}};
  h += R"(<div class="charts">)";
  for (const auto& [dim, title] : sections) {
    ordered_json rows = sh.value(dim, ordered_json::array());
    auto slices = slices_of(rows, std::string_view(dim) == "label");
    bool pie = std::string_view(dim) == "definition" || std::string_view(dim) == "label";
    h += R"(<div class="chart"><h2>)" + std::string(title) + "</h2>";
    h += pie ? pie_svg(slices, title) : bars_svg(slices, title);
    h += share_table(rows, slices) + "</div>";
  }
  h += "</div>";

  const auto& sel = m.value("selection", ordered_json::object());
  h += "<h2>Selection</h2><table><tr><th>definition</th><th>label</th><th class=\"num\">available</th><th class=\"num\">kept</th></tr>";
  for (const auto& s : sel.value("strata", ordered_json::array()))
    h += fmt::format(R"(<tr><td>{}</td><td>{}</td><td class="num">{}</td><td class="num">{}</td></tr>)",
                     html_escape(s.value("definition", "")), html_escape(s.value("label", "")), s.value("available", int64_t{0}),
                     s.value("kept", int64_t{0}));
  h += "</table><h2>Source runs</h2><table><tr><th>run</th><th>model</th><th class=\"num\">trajectories read</th></tr>";
  for (const auto& r : sel.value("runs", ordered_json::array()))
    h += fmt::format(R"(<tr><td>{}</td><td>{}</td><td class="num">{}</td></tr>)", html_escape(r.value("run", "")),
                     html_escape(r.value("model", "")), r.value("trajectories_read", int64_t{0}));
  h += "</table></body></html>\n";
  return h;
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
