#include "runs/import_original.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "common/error.h"
#include "common/fs.h"
#include "common/sha256.h"

namespace ptxbench {
namespace {

constexpr const char* kLibrary = "import";
constexpr const char* kSource = "ptxbench-original";
constexpr const char* kNotes = "imported from the original PTXBench release";

// The release's arch values: the GPU its runs used and the instruction-family tag they required
// (H: wgmma/TMA on sm_90a, B: tcgen05/TMA on sm_100a; the release's problem scripts and run names).
struct ArchInfo {
  const char* arch;
  const char* gpu;
  const char* tag;
};
constexpr ArchInfo kArchs[] = {
    {"hopper", "NVIDIA H100", "H"},
    {"blackwell", "NVIDIA B200", "B"},
};

// The release's `correctness` values (its exporter's classify_turn) and the status we store.
struct StatusRule {
  const char* correctness;
  const char* status;
};
constexpr StatusRule kStatuses[] = {
    {"Correct", "PASSED"},
    {"Numerical error", "INCORRECT_NUMERICAL"},
    {"Compilation error", "COMPILE_ERROR"},
    {"Runtime error", "RUNTIME_ERROR"},
    {"Kernel Execution Timeout", "TIMEOUT"},
    {"Sanitize Timeout", kSanitizeTimeoutStatus},
    {"Profiling Service Timeout", kServiceTimeoutStatus},
    {"Extraction error", kExtractionErrorStatus},
    {"Other error", kOtherErrorStatus},
};

// What each column becomes, as recorded in every imported run's config.
const ordered_json& column_mapping() {
  static const ordered_json m = {
      {"model", "the run's model (one run per model x arch)"},
      {"arch", "the run's GPU: hopper -> NVIDIA H100, blackwell -> NVIDIA B200"},
      {"required_arch_tag", "checked against arch (H for hopper, B for blackwell); recorded in the config"},
      {"workload", "trajectory key: workload uuid"},
      {"workload_name", "recorded in the config (workloads)"},
      {"definition", "trajectory key: definition"},
      {"exp_dir", "trajectory key: prompt tag = its last path component (the experiment; reports split imported runs by it); "
                  "full paths in the config"},
      {"trajectory_id", "trajectory key: index = NNN of exp_NNN"},
      {"turn", "turn = turn + 1 (the release counts from 0)"},
      {"reasoning_tokens", "the turn's usage: reasoning_tokens (prompt and completion tokens are not released: stored as 0)"},
      {"reasoning_token_source", "recorded in the config (reasoning_token_sources)"},
      {"correctness", "the turn's status (status_mapping)"},
      {"speedup", "the turn's speedup for Correct turns; the release writes 0.0 for the others, stored as none"},
      {"arch_tag", "not stored (correct_with_arch carries the verdict that matters)"},
      {"correct_with_arch", "the turn's target_instruction flag (the paper's rule; only with Correct)"},
      {"performance_score", "not stored (equal to speedup in the release)"},
  };
  return m;
}

ordered_json status_mapping() {
  ordered_json m = ordered_json::object();
  for (const auto& r : kStatuses) m[r.correctness] = r.status;
  return m;
}

[[noreturn]] void fail(const std::string& file, int64_t line, const std::string& message) {
  throw InputError(kLibrary, file + ":" + std::to_string(line) + ": " + message);
}

std::optional<int64_t> parse_count(const std::string& s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

std::optional<double> parse_number(const std::string& s) {
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// "…/eval_runs/opus48-gemm" -> "opus48-gemm" (a trailing slash is ignored).
std::string last_component(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// One data row, checked.
struct Row {
  int64_t line = 0;
  std::string model, arch, definition, workload, workload_name, exp_dir, trajectory_id, source;
  TrajectoryKey key;
  int64_t turn = 0;  // 0-based, as in the file
  ImportedTurn imported;
};

class RowReader {
 public:
  RowReader(const std::string& file, const CsvRecord& header) : m_file(file), m_width(header.fields.size()) {
    std::map<std::string, std::size_t> at;
    for (std::size_t i = 0; i < header.fields.size(); ++i) {
      if (at.count(header.fields[i]))
        fail(file, header.line, "the header names column '" + header.fields[i] + "' twice");
      at[header.fields[i]] = i;
    }
    for (const auto& c : original_csv_columns()) {
      auto it = at.find(c);
      if (it == at.end()) {
        std::string all;
        for (const auto& x : original_csv_columns()) all += (all.empty() ? "" : ", ") + x;
        throw InputError(kLibrary, file + ": the header has no column '" + c +
                                       "' (the original's reasoning_tokens_vs_performance.csv has " + all + ")");
      }
      m_index[c] = it->second;
    }
  }

  Row read(const CsvRecord& r) const {
    if (r.fields.size() != m_width)
      fail(m_file, r.line, "the row has " + std::to_string(r.fields.size()) + " fields, the header " + std::to_string(m_width));
    Row row;
    row.line = r.line;
    auto get = [&](const char* c) -> const std::string& { return r.fields[m_index.at(c)]; };
    auto nonempty = [&](const char* c) -> const std::string& {
      const std::string& v = get(c);
      if (v.empty()) fail(m_file, r.line, std::string("column '") + c + "' is empty");
      return v;
    };
    row.model = nonempty("model");
    row.arch = nonempty("arch");
    auto tag = original_arch_tag(row.arch);
    if (!tag) fail(m_file, r.line, "arch '" + row.arch + "' is not hopper or blackwell");
    if (get("required_arch_tag") != *tag)
      fail(m_file, r.line, "required_arch_tag '" + get("required_arch_tag") + "' does not go with arch " + row.arch +
                               " (" + *tag + ")");
    row.definition = nonempty("definition");
    row.workload = nonempty("workload");
    row.workload_name = get("workload_name");
    row.exp_dir = nonempty("exp_dir");
    row.source = get("reasoning_token_source");

    row.trajectory_id = nonempty("trajectory_id");
    const std::string& traj = row.trajectory_id;
    auto index = traj.rfind("exp_", 0) == 0 ? parse_count(traj.substr(4)) : std::nullopt;
    if (!index) fail(m_file, r.line, "trajectory_id '" + traj + "' is not exp_NNN");
    row.key = {row.definition, row.workload, last_component(row.exp_dir), *index};

    auto turn = parse_count(get("turn"));
    if (!turn) fail(m_file, r.line, "turn '" + get("turn") + "' is not a turn number (0, 1, ...)");
    row.turn = *turn;
    auto reasoning = parse_count(get("reasoning_tokens"));
    if (!reasoning) fail(m_file, r.line, "reasoning_tokens '" + get("reasoning_tokens") + "' is not a count");

    const std::string& correctness = get("correctness");
    auto status = original_status(correctness);
    if (!status) {
      std::string known;
      for (const auto& s : kStatuses) known += (known.empty() ? "'" : ", '") + std::string(s.correctness) + "'";
      fail(m_file, r.line, "correctness '" + correctness + "' is none of " + known);
    }
    ImportedTurn& t = row.imported;
    t.turn = row.turn + 1;
    t.status = *status;
    t.correct = correctness == "Correct";
    const std::string& with_arch = get("correct_with_arch");
    if (with_arch != "0" && with_arch != "1")
      fail(m_file, r.line, "correct_with_arch '" + with_arch + "' is not 0 or 1");
    t.target_instruction = with_arch == "1";
    if (t.target_instruction && !t.correct)
      fail(m_file, r.line, "correct_with_arch is 1 but correctness is '" + correctness + "'");
    const std::string& speedup = get("speedup");
    auto value = parse_number(speedup);
    if (!speedup.empty() && (!value || *value < 0))
      fail(m_file, r.line, "speedup '" + speedup + "' is not a finite number >= 0");
    if (t.correct) {
      if (!value) fail(m_file, r.line, "a Correct row has no speedup");
      t.speedup = value;
    }
    t.usage.reasoning_tokens = *reasoning;
    t.usage.provider = kSource;
    t.usage.model = row.model;
    return row;
  }

 private:
  std::string m_file;
  std::size_t m_width;
  std::map<std::string, std::size_t> m_index;
};

// "model / exp_dir / trajectory_id": a trajectory as the file names it.
std::string where(const Row& row) { return row.model + " / " + row.exp_dir + " / " + row.trajectory_id; }

struct TrajectoryRows {
  TrajectoryKey key;
  std::vector<const Row*> rows;
};

struct RunRows {
  std::string model, arch;
  std::vector<const Row*> rows;
  std::vector<TrajectoryRows> trajectories;  // in the order the file first names them
  std::map<std::tuple<std::string, std::string, std::string, int64_t>, std::size_t> by_key;
};

// Group: run per (model, arch), trajectory per key, in the order the file first names them.
std::vector<RunRows> group_rows(const std::vector<Row>& rows) {
  std::vector<RunRows> runs;
  std::map<std::pair<std::string, std::string>, std::size_t> run_at;
  for (const Row& row : rows) {
    auto [it, fresh] = run_at.try_emplace({row.model, row.arch}, runs.size());
    if (fresh) runs.push_back({row.model, row.arch, {}, {}, {}});
    RunRows& run = runs[it->second];
    run.rows.push_back(&row);
    auto key = std::make_tuple(row.key.definition, row.key.workload_uuid, row.key.prompt_tag, row.key.index);
    auto [t, new_traj] = run.by_key.try_emplace(key, run.trajectories.size());
    if (new_traj) run.trajectories.push_back({row.key, {}});
    run.trajectories[t->second].rows.push_back(&row);
  }
  return runs;
}

// Sorts each trajectory's rows by turn and checks they are 0, 1, ..., n-1, each once. Returns the
// run's turn budget: the most turns a trajectory has.
int64_t order_turns(const std::string& csv_path, std::vector<TrajectoryRows>& trajectories) {
  int64_t num_turns = 0;
  for (auto& traj : trajectories) {
    std::stable_sort(traj.rows.begin(), traj.rows.end(), [](const Row* a, const Row* b) { return a->turn < b->turn; });
    for (std::size_t k = 0; k < traj.rows.size(); ++k) {
      const Row& row = *traj.rows[k];
      if (k > 0 && traj.rows[k - 1]->turn == row.turn)
        fail(csv_path, row.line, "turn " + std::to_string(row.turn) + " of " + where(row) + " is also on line " +
                                     std::to_string(traj.rows[k - 1]->line));
      if (row.turn != static_cast<int64_t>(k))
        fail(csv_path, row.line, "turn " + std::to_string(row.turn) + " of " + where(row) + " follows no turn " +
                                     std::to_string(k) + " (the release counts turns from 0, with no gaps)");
    }
    num_turns = std::max<int64_t>(num_turns, static_cast<int64_t>(traj.rows.size()));
  }
  return num_turns;
}

std::string import_key(const std::string& sha256, const std::string& arch, const std::string& model) {
  // arch never holds '/', and the model comes last, so no two (arch, model) pairs share a key.
  return std::string(kSource) + "/" + sha256 + "/" + arch + "/" + model;
}

}  // namespace

const std::vector<std::string>& original_csv_columns() {
  static const std::vector<std::string> columns = {
      "model",          "arch",      "required_arch_tag", "workload",       "workload_name",
      "definition",     "exp_dir",   "trajectory_id",     "turn",           "reasoning_tokens",
      "reasoning_token_source", "correctness", "speedup",  "arch_tag",       "correct_with_arch",
      "performance_score"};
  return columns;
}

std::optional<std::string> original_arch_gpu(const std::string& arch) {
  for (const auto& a : kArchs)
    if (arch == a.arch) return a.gpu;
  return std::nullopt;
}

std::optional<std::string> original_arch_tag(const std::string& arch) {
  for (const auto& a : kArchs)
    if (arch == a.arch) return a.tag;
  return std::nullopt;
}

std::optional<std::string> original_status(const std::string& correctness) {
  for (const auto& s : kStatuses)
    if (correctness == s.correctness) return s.status;
  return std::nullopt;
}

std::vector<CsvRecord> parse_csv(const std::string& text, const std::string& file) {
  std::vector<CsvRecord> out;
  std::size_t i = 0, n = text.size();
  if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) i = 3;
  int64_t line = 1;
  while (i < n) {
    CsvRecord rec;
    rec.line = line;
    std::string field;
    bool record_done = false;
    while (!record_done) {
      if (i < n && text[i] == '"') {  // a quoted field: up to the closing quote, "" is one quote
        int64_t opened = line;
        ++i;
        for (;;) {
          if (i >= n) fail(file, opened, "a quoted field is never closed");
          char c = text[i++];
          if (c == '"') {
            if (i < n && text[i] == '"') {
              field += '"';
              ++i;
              continue;
            }
            break;
          }
          if (c == '\n') ++line;
          field += c;
        }
        if (i < n && text[i] != ',' && text[i] != '\n' && text[i] != '\r')
          fail(file, line, "text after the closing quote of a field");
      } else {
        while (i < n && text[i] != ',' && text[i] != '\n' && text[i] != '\r') {
          if (text[i] == '"') fail(file, line, "a quote inside an unquoted field");
          field += text[i++];
        }
      }
      rec.fields.push_back(std::move(field));
      field.clear();
      if (i < n && text[i] == ',') {
        ++i;
        continue;
      }
      if (i < n && text[i] == '\r') ++i;
      if (i < n && text[i] == '\n') ++i;
      ++line;
      record_done = true;
    }
    bool blank = rec.fields.size() == 1 && rec.fields[0].empty();
    if (!blank) out.push_back(std::move(rec));
  }
  return out;
}

int64_t OriginalImportSummary::runs_created() const {
  return std::count_if(runs.begin(), runs.end(), [](const OriginalImportRun& r) { return !r.already_imported; });
}

int64_t OriginalImportSummary::models() const {
  std::set<std::string> m;
  for (const auto& r : runs) m.insert(r.model);
  return static_cast<int64_t>(m.size());
}

int64_t OriginalImportSummary::trajectories() const {
  int64_t t = 0;
  for (const auto& r : runs) t += r.trajectories;
  return t;
}

int64_t OriginalImportSummary::turns() const {
  int64_t t = 0;
  for (const auto& r : runs) t += r.turns;
  return t;
}

ordered_json OriginalImportSummary::to_json() const {
  ordered_json runs_json = ordered_json::array();
  for (const auto& r : runs)
    runs_json.push_back({{"run_id", r.run_id},
                         {"model", r.model},
                         {"arch", r.arch},
                         {"gpu", r.gpu},
                         {"already_imported", r.already_imported},
                         {"rows", r.rows},
                         {"trajectories", r.trajectories},
                         {"short_trajectories", r.short_trajectories},
                         {"experiments", r.experiments},
                         {"turns", r.turns}});
  ordered_json skipped_json = ordered_json::array();
  for (const auto& s : skipped) skipped_json.push_back({{"reason", s.reason}, {"rows", s.rows}});
  return {{"schema", "ptxbench.import"},
          {"source", kSource},
          {"origin", kOriginalOrigin},
          {"file", file},
          {"sha256", sha256},
          {"store", store},
          {"rows", rows},
          {"runs_created", runs_created()},
          {"models", models()},
          {"trajectories", trajectories()},
          {"turns", turns()},
          {"runs", runs_json},
          {"skipped", skipped_json}};
}

OriginalRelease read_original_csv(const std::string& csv_path) {
  std::string text = read_file(csv_path);
  OriginalRelease release;
  release.file = csv_path;
  release.sha256 = sha256_hex(text);

  std::vector<CsvRecord> records = parse_csv(text, csv_path);
  if (records.empty()) throw InputError(kLibrary, csv_path + ": the file is empty (no header)");
  RowReader reader(csv_path, records.front());
  std::vector<Row> rows;
  rows.reserve(records.size() - 1);
  for (std::size_t i = 1; i < records.size(); ++i) rows.push_back(reader.read(records[i]));
  release.rows = static_cast<int64_t>(rows.size());

  for (RunRows& run : group_rows(rows)) {
    OriginalImportRun s;
    s.model = run.model;
    s.arch = run.arch;
    s.gpu = *original_arch_gpu(run.arch);
    s.rows = static_cast<int64_t>(run.rows.size());
    s.trajectories = static_cast<int64_t>(run.trajectories.size());
    s.turns = s.rows;
    const int64_t num_turns = order_turns(csv_path, run.trajectories);

    ImportedRun out;
    out.origin = kOriginalOrigin;
    out.import_key = import_key(release.sha256, run.arch, run.model);
    out.model = run.model;
    out.gpu = s.gpu;
    out.notes = kNotes;
    std::set<std::string> experiments, sources;
    ordered_json workloads = ordered_json::object();
    std::set<std::string> tags;
    for (const Row* row : run.rows) {
      experiments.insert(row->exp_dir);
      tags.insert(row->key.prompt_tag);
      if (!row->source.empty()) sources.insert(row->source);
      if (!row->workload_name.empty()) workloads[row->workload] = row->workload_name;
    }
    s.experiments = static_cast<int64_t>(tags.size());
    out.config = {{"source",
                   {{"kind", kSource},
                    {"release", "zhang677/PTXBench benchmark/plot_viewer_v1/data/reasoning_tokens_vs_performance.csv"},
                    {"file", std::filesystem::absolute(csv_path).lexically_normal().string()},
                    {"sha256", release.sha256},
                    {"rows", release.rows},
                    {"run_rows", s.rows}}},
                  {"model", run.model},
                  {"arch", run.arch},
                  {"required_arch_tag", *original_arch_tag(run.arch)},
                  {"gpu", s.gpu},
                  {"num_turns", num_turns},
                  {"experiments", experiments},
                  {"workloads", workloads},
                  {"reasoning_token_sources", sources},
                  {"column_mapping", column_mapping()},
                  {"status_mapping", status_mapping()}};
    for (const auto& traj : run.trajectories) {
      ImportedTrajectory t;
      t.key = traj.key;
      for (const Row* row : traj.rows) t.turns.push_back(row->imported);
      auto n = static_cast<int64_t>(t.turns.size());
      if (n < num_turns) {
        t.status = TrajectoryStatus::failed;
        t.stop_reason = "imported: the release holds " + std::to_string(n) + " of the run's " + std::to_string(num_turns) + " turns";
        ++s.short_trajectories;
      } else {
        t.status = TrajectoryStatus::finished;
        t.stop_reason = "imported: " + std::to_string(n) + " turns";
      }
      out.trajectories.push_back(std::move(t));
    }
    release.summary.push_back(std::move(s));
    release.runs.push_back(std::move(out));
  }
  return release;
}

OriginalImportSummary import_original(RunStore& store, const OriginalRelease& release) {
  OriginalImportSummary summary;
  summary.file = release.file;
  summary.sha256 = release.sha256;
  summary.store = store.path();
  summary.rows = release.rows;
  summary.runs = release.summary;
  // One transaction; a run this file gave the store before (or meanwhile) comes back as nullopt.
  auto ids = store.import_runs(release.runs);
  for (std::size_t k = 0; k < ids.size(); ++k) {
    OriginalImportRun& s = summary.runs[k];
    if (ids[k]) {
      s.run_id = *ids[k];
      continue;
    }
    auto existing = store.find_imported_run(release.runs[k].import_key);
    s.run_id = existing ? existing->id : "";
    s.already_imported = true;
    summary.skipped.push_back({"already imported as run " + s.run_id + " (" + s.model + ", " + s.arch + ")", s.rows});
  }
  return summary;
}

OriginalImportSummary import_original_csv(RunStore& store, const std::string& csv_path) {
  return import_original(store, read_original_csv(csv_path));
}

}  // namespace ptxbench
