// Imports the original PTXBench's released per-turn results (the plot viewer's
// reasoning_tokens_vs_performance.csv) into a run store as reference runs, one per model × arch,
// so reports can set our runs beside the paper's models (docs/report.md, "Importing the original
// PTXBench's results").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runs/run_store.h"
#include "common/json_check.h"

namespace ptxbench {

/// The origin of runs imported from the original PTXBench release.
inline constexpr const char* kOriginalOrigin = "imported:ptxbench-original";
/// The columns the CSV must have (any order; other columns are ignored).
const std::vector<std::string>& original_csv_columns();

/// The GPU an `arch` value of the release means: "hopper" -> "NVIDIA H100" (sm_90a),
/// "blackwell" -> "NVIDIA B200" (sm_100a); nullopt for any other value.
std::optional<std::string> original_arch_gpu(const std::string& arch);
/// The `required_arch_tag` the release writes for an arch: "H" for hopper, "B" for blackwell.
std::optional<std::string> original_arch_tag(const std::string& arch);
/// The turn status stored for a `correctness` value of the release (PASSED, COMPILE_ERROR, ...,
/// kSanitizeTimeoutStatus, ...); nullopt for a value the release does not use.
std::optional<std::string> original_status(const std::string& correctness);

/// One CSV record (RFC 4180: quoted fields may hold commas, doubled quotes and line breaks).
struct CsvRecord {
  int64_t line = 0;  ///< the line of the file where the record starts (the header is line 1)
  std::vector<std::string> fields;
};
/// Parses CSV text; InputError naming `file` and the line of an unterminated quote or of text
/// after a closing quote. A UTF-8 byte-order mark and CRLF line ends are accepted; blank lines
/// are skipped.
std::vector<CsvRecord> parse_csv(const std::string& text, const std::string& file);

/// One run of the import: a (model, arch) pair of the file. Its counts are the file's rows of that
/// run, whether imported now or before.
struct OriginalImportRun {
  std::string model, arch, gpu;
  std::string run_id;             ///< the new run, or the one that holds this import already
  bool already_imported = false;  ///< nothing was written for it
  int64_t rows = 0, trajectories = 0, turns = 0;
  int64_t short_trajectories = 0;  ///< with fewer turns than the run's longest (stored as failed)
  /// The release's experiment folders (exp_dir) in the run: its trajectories' prompt tags, by which
  /// reports split an imported run (one row per experiment and definition).
  int64_t experiments = 0;
};

struct SkippedRows {
  std::string reason;
  int64_t rows = 0;
};

struct OriginalImportSummary {
  std::string file;    ///< as given
  std::string sha256;  ///< of the file's bytes
  std::string store;
  int64_t rows = 0;    ///< data rows in the file
  std::vector<OriginalImportRun> runs;  ///< in the order the file first names them
  std::vector<SkippedRows> skipped;     ///< rows not written, by reason

  [[nodiscard]] int64_t runs_created() const;
  [[nodiscard]] int64_t models() const;  ///< distinct model names over all runs of the file
  [[nodiscard]] int64_t trajectories() const;  ///< over all runs of the file (created or not)
  [[nodiscard]] int64_t turns() const;
  [[nodiscard]] ordered_json to_json() const;
};

/// A release file read and checked, before anything is written.
struct OriginalRelease {
  std::string file, sha256;
  int64_t rows = 0;
  std::vector<ImportedRun> runs;            ///< one per (model, arch), in the order the file names them
  std::vector<OriginalImportRun> summary;   ///< the same runs, as the summary lists them (no run ids yet)
};

/// Reads `csv_path` and checks every row: a malformed row is an InputError "FILE:LINE: ...", a
/// missing column an InputError naming it and the file. Touches no store.
OriginalRelease read_original_csv(const std::string& csv_path);
/// Writes the release's runs (finished, origin kOriginalOrigin) in one transaction. Runs this
/// file already gave the store (same SHA-256, model and arch) are reported as already imported,
/// their rows as skipped, and are left as they are.
OriginalImportSummary import_original(RunStore& store, const OriginalRelease& release);
/// read_original_csv, then import_original.
OriginalImportSummary import_original_csv(RunStore& store, const std::string& csv_path);

}  // namespace ptxbench
