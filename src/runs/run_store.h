// The agent's run store: one SQLite file (WAL) with every run, trajectory, turn, message, usage
// record, candidate and verdict, written step by step as the turn loop advances. Each step is one
// transaction that checks the step before it, so a run killed at any moment (kill -9 included)
// resumes from resume_point() with no lost and no repeated turn (docs/agent.md, "Run store").
// Imported runs (reference results of another benchmark) are written whole by import_runs and
// are read like the others; the turn steps refuse them (docs/report.md, "Importing ...").
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/json_check.h"
#include "runs/run_holder.h"
#include "runs/run_status.h"
#include "common/sqlite_db.h"
#include "compile/triton_check.h"
#include "verdict/verdict.h"

namespace ptxbench {

/// Misuse of the store (a step out of order or twice, an unknown id) or a file it cannot read.
class RunStoreError : public Error {
 public:
  explicit RunStoreError(const std::string& message) : Error("run store", message) {}
};

/// A run another live process holds (resume, delete): bad input, not our bug (exit 2). The
/// message names the holder and says what to do.
class RunHeldError : public InputError {
 public:
  explicit RunHeldError(const std::string& message) : InputError("run store", message) {}
};

/// The turn status stored when no candidate could be extracted from the answer (not a verdict).
inline constexpr const char* kExtractionErrorStatus = "EXTRACTION_ERROR";

/// Turn statuses only imported runs carry: labels of another evaluator that ours never writes
/// (report/metrics.cpp maps them to the paper's turn labels).
inline constexpr const char* kSanitizeTimeoutStatus = "SANITIZE_TIMEOUT";
inline constexpr const char* kServiceTimeoutStatus = "SERVICE_TIMEOUT";
inline constexpr const char* kOtherErrorStatus = "OTHER_ERROR";

/// Where a run's results come from: "measured" (our agent and evaluator wrote them step by step),
/// or "imported:SOURCE" (reference results of another benchmark, written by import_runs; they
/// have no messages, candidates or verdicts, and the turn steps refuse them).
inline constexpr const char* kMeasuredOrigin = "measured";
inline constexpr const char* kImportedOriginPrefix = "imported:";

/// A chat message as stored. Our own minimal type: the provider-neutral ChatMessage of
/// llm/chat.h converts to and from it by role and content.
struct StoredMessage {
  std::string role;     ///< system, user, assistant
  std::string content;
  int64_t turn = 0;     ///< 0: the opening messages (system, task); n: answer or feedback of turn n
  int64_t seq = 0;      ///< 1.. within the trajectory (set by the store)
  std::string reasoning{};  ///< assistant only: the provider's reasoning text, where it returns one
};

/// Where a repair trajectory's seed came from: a failed turn of another run (`ptxbench data seeds`).
struct SeedOrigin {
  std::string run_id;
  std::optional<int64_t> trajectory_id;  ///< that run's trajectory (a store id)
  int64_t turn = 0;                      ///< that trajectory's turn (1..)
};

/// The wrong kernel a repair trajectory starts from, stored as the trajectory's turn 0 beside its
/// opening messages. Not a model turn: the report's turn rows never hold it; `data build` pairs it
/// with the trajectory's first fix (a cross-run pair when it has an origin).
struct SeedTurn {
  std::string source;                     ///< the wrong kernel
  CandidateLanguage language = CandidateLanguage::cuda;
  std::string status;                     ///< its verdict status (a Status name)
  std::string feedback;                   ///< as the model was shown it (repair notes included)
  std::optional<ordered_json> verdict;    ///< the source turn's verdict document, when the seed carried it
  std::optional<SeedOrigin> origin;
};

/// One model call (its retries included) as the client accounted it.
struct ModelUsage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t reasoning_tokens = 0;  ///< part of completion_tokens where the provider reports it
  int64_t cached_tokens = 0;     ///< part of prompt_tokens served from the provider's cache
  double latency_s = 0.0;        ///< wall time of the call, retries and back-off included
  int64_t attempts = 1;          ///< HTTP requests it took
  std::string provider{};
  std::string model{};
  std::string finish_reason{};   ///< stop, length (truncated), other
};

struct RunInfo {
  std::string id;  ///< "20261129-143205-3fa2": UTC creation time + 4 random hex digits
  RunStatus status = RunStatus::running;
  std::string model;
  std::string notes;
  ordered_json config;
  double created_at = 0.0, updated_at = 0.0;  ///< Unix seconds
  std::string origin = kMeasuredOrigin;  ///< kMeasuredOrigin, or "imported:SOURCE"
  /// The GPU of the whole run where no verdict names one (imported runs); "" for measured runs,
  /// whose verdicts name theirs.
  std::string gpu{};
  std::string import_key{};  ///< imported runs: what makes the import unique ("" for measured runs)
  std::string failure{};     ///< failed: the error that stopped the run; "" otherwise
  /// While stored as running: the process that holds it (none for runs of older versions, which
  /// read as crashed). `status` is already crashed when this process is gone.
  std::optional<RunHolder> holder{};
  std::optional<double> archived_at{};  ///< archived (Unix seconds): hidden from `run --list` unless --all

  [[nodiscard]] bool imported() const { return origin != kMeasuredOrigin; }
  [[nodiscard]] bool archived() const { return archived_at.has_value(); }
};

/// What makes a trajectory unique within its run (docs/design.md §6: definition × prompt tag × index).
struct TrajectoryKey {
  std::string definition;
  std::string workload_uuid;
  std::string prompt_tag;
  int64_t index = 0;  ///< 0.. within (definition, workload, tag)
};

struct TrajectoryInfo {
  int64_t id = 0;
  std::string run_id;
  TrajectoryKey key;
  TrajectoryStatus status = TrajectoryStatus::running;
  std::string stop_reason;
  std::optional<double> best_speedup;         ///< max speedup over PASSED turns
  std::optional<double> best_target_speedup;  ///< same, only target-instruction-correct turns
  int64_t turns_completed = 0;
  double started_at = 0.0;
  std::optional<double> finished_at;
};

/// Everything stored about one turn, as far as it got.
struct TurnRecord {
  int64_t trajectory_id = 0;
  int64_t turn = 0;
  TurnStep step = TurnStep::model_call_started;
  std::optional<std::string> answer;  ///< the assistant message
  std::optional<std::string> reasoning;  ///< its reasoning text ("" when the provider gave none)
  std::optional<ModelUsage> usage;
  std::optional<std::string> candidate_sha256;
  std::optional<std::string> candidate_source;
  std::optional<CandidateLanguage> candidate_language;  ///< with the candidate: what it was stored as
  std::optional<std::string> extraction_error;
  std::optional<std::string> task_id;  ///< the service task of the current submission
  int64_t submissions = 0;             ///< 1, or more after record_resubmission or an INFRA_ERROR re-run
  /// INFRA_ERROR evaluations of this turn kept aside (record_infra_attempt): re-run, never shown
  /// to the model, never a turn of their own.
  int64_t infra_attempts = 0;
  std::optional<Verdict> verdict;      ///< read from the stored document (record_verdict checked it)
  std::string status;                  ///< verdict status, kExtractionErrorStatus, or "" before either
  bool correct = false;                ///< status == PASSED
  bool target_instruction = false;     ///< the verdict's target_instruction.correct
  std::optional<double> speedup;
  std::optional<std::string> feedback;
  double started_at = 0.0;
  std::optional<double> answered_at, completed_at;
};

/// An evaluation that ended INFRA_ERROR (our side failed: worker died, GPU sick), kept as a record
/// beside its turn: the turn was evaluated again, so reports never count it.
struct InfraAttempt {
  int64_t trajectory_id = 0;
  int64_t turn = 0;
  int64_t attempt = 0;  ///< 1.. within the turn
  std::string task_id;
  std::string message;  ///< the verdict's message
  ordered_json verdict;
  double created_at = 0.0;
};

/// When another live process holds `run` (or one of another host, which cannot be checked): "run
/// ID is running in pid N on host H: <refused> (...)"; "" when nothing holds it but this process.
std::string held_elsewhere(const RunInfo& run, const std::string& refused);

/// What delete_run removed.
struct DeletedRun {
  int64_t trajectories = 0;
  int64_t turns = 0;
};

/// One completed turn of an imported run: the outcome only (no answer, candidate or verdict).
struct ImportedTurn {
  int64_t turn = 0;                 ///< 1 + the trajectory's last turn
  std::string status;               ///< a verdict status, kExtractionErrorStatus or an imported-only status above
  bool correct = false;             ///< must equal status == PASSED
  bool target_instruction = false;  ///< target-instruction correct; only with correct
  std::optional<double> speedup;    ///< finite and >= 0 where given
  ModelUsage usage{};               ///< stored as the turn's usage row (tokens the source released)
};

/// One trajectory of an imported run with its turns.
struct ImportedTrajectory {
  TrajectoryKey key;
  std::vector<ImportedTurn> turns;  ///< turn 1, 2, ... in order
  /// How it ended: finished, stopped_early or failed (short of the budget); running leaves it open
  /// for import_turn.
  TrajectoryStatus status = TrajectoryStatus::finished;
  std::string stop_reason{};
};

/// A run of reference results from another benchmark, written whole by RunStore::import_runs.
struct ImportedRun {
  std::string origin;      ///< "imported:SOURCE" (kMeasuredOrigin is refused)
  std::string import_key;  ///< unique in a store: a second import of the same key changes nothing
  std::string model, gpu, notes;
  ordered_json config;     ///< where it came from, how its columns were mapped
  std::vector<ImportedTrajectory> trajectories;
};

/// One row per turn for reports (`ptxbench report`): docs/design.md §7 metrics are computed from these.
struct TurnRow {
  int64_t trajectory_id = 0;
  int64_t turn = 0;
  TurnStep step = TurnStep::model_call_started;
  std::string status;  ///< verdict status, kExtractionErrorStatus, or "" (not reached)
  bool correct = false;
  bool target_instruction = false;
  std::optional<double> speedup;
  int64_t prompt_tokens = 0, completion_tokens = 0, reasoning_tokens = 0, cached_tokens = 0;
  double latency_s = 0.0;
};

/// Where a trajectory stands, read in one snapshot (RunStore::resume_point).
struct ResumePoint {
  TrajectoryInfo trajectory;
  int64_t turn = 0;                     ///< the last turn begun; 0 when none
  std::optional<TurnRecord> last;       ///< that turn as stored
  std::vector<StoredMessage> messages;  ///< the conversation so far, in order
  [[nodiscard]] NextAction next() const;
};

/// How complete_turn may also end the trajectory in the same transaction.
struct TrajectoryEnd {
  TrajectoryStatus status = TrajectoryStatus::finished;
  std::string reason;
};

/// Thread-safe: one object may be shared by the threads of a process; separate objects (or
/// processes) on the same file are serialized by SQLite (WAL, BEGIN IMMEDIATE, busy timeout).
class RunStore {
 public:
  /// create: the file is made when missing; existing: a missing file is a StoreError; read_only:
  /// as existing, and nothing is written (SqliteDb::Mode::read_only; an older schema is migrated
  /// once first): for commands that only list or report.
  enum class Open { create, existing, read_only };
  /// Opens the store, creating or migrating its schema. Throws StoreError (exit 2) when the file is
  /// missing (existing, read_only), was written by a newer ptxbench (PRAGMA user_version above
  /// ours) or is another kind of database.
  explicit RunStore(const std::string& path, Open mode = Open::create);
  RunStore(const RunStore&) = delete;
  RunStore& operator=(const RunStore&) = delete;

  /// 2: runs.origin, runs.gpu, runs.import_key (imported runs); 3: candidates.language (Triton
  /// candidates, issue 22; older candidates are 'cuda'); 4: the run lifecycle (runs.state with
  /// `failed`, runs.failure, the holder, runs.archived_at) and the infra_attempts table; 5: the
  /// seed_turns table (a repair trajectory's seed as its turn 0, issue 36). Older files are
  /// migrated in place.
  static constexpr int kSchemaVersion = 5;
  [[nodiscard]] const std::string& path() const noexcept { return m_path; }

  // ---- runs
  /// A new run with a short readable id, status running, held by the calling process.
  std::string create_run(const ordered_json& config, const std::string& model, const std::string& notes = "");
  /// Newest first, archived ones included (RunInfo::archived); a running run whose holder is gone
  /// reads as crashed.
  [[nodiscard]] std::vector<RunInfo> list_runs() const;
  [[nodiscard]] std::optional<RunInfo> find_run(const std::string& id) const;
  [[nodiscard]] RunInfo run(const std::string& id) const;  ///< throws when unknown
  [[nodiscard]] ordered_json run_config(const std::string& id) const;
  /// running: the calling process holds the run from now on; finished, interrupted, failed: the
  /// run is let go (`failure` is stored with failed, cleared otherwise). crashed is refused (it is
  /// never stored), and so is any status of an imported run (finished when written).
  void set_run_status(const std::string& id, RunStatus status, const std::string& failure = "");
  /// `--resume`: the calling process takes the run over (status running, failure cleared) unless
  /// another live process holds it (RunHeldError naming it) or it was imported (RunStoreError).
  /// Returns the run as it was before.
  RunInfo claim_run(const std::string& id);
  void set_run_notes(const std::string& id, const std::string& notes);
  /// Hides the run from `run --list` (archived) or shows it again; reports still read it by id.
  void set_run_archived(const std::string& id, bool archived);
  /// Removes the run and everything of it (trajectories, turns, messages, usage, verdicts, INFRA
  /// attempts, rows of other tables keyed by its trajectories; candidates no other turn uses) in
  /// one transaction. A run a live process holds is refused (RunHeldError) unless `force`.
  DeletedRun delete_run(const std::string& id, bool force = false);

  // ---- imported runs (reference results of another benchmark; docs/report.md)
  /// Writes the runs with their trajectories and turns in ONE transaction: all or nothing. A run
  /// whose import_key is stored already is left as it is: its slot in the result is nullopt;
  /// the others hold the new run ids (status finished), in order.
  std::vector<std::optional<std::string>> import_runs(const std::vector<ImportedRun>& runs);
  /// The run stored under an import key.
  [[nodiscard]] std::optional<RunInfo> find_imported_run(const std::string& import_key) const;
  /// One completed turn into a running trajectory of an imported run (never a measured one):
  /// stored at step complete, with its usage; updates the trajectory's best speedups.
  void import_turn(int64_t trajectory_id, const ImportedTurn& turn);

  // ---- trajectories
  /// The trajectory of `key` in the run, created (running) when absent: call it again on resume.
  int64_t ensure_trajectory(const std::string& run_id, const TrajectoryKey& key);
  [[nodiscard]] std::optional<int64_t> find_trajectory(const std::string& run_id, const TrajectoryKey& key) const;
  [[nodiscard]] TrajectoryInfo trajectory(int64_t trajectory_id) const;
  [[nodiscard]] std::vector<TrajectoryInfo> list_trajectories(const std::string& run_id) const;
  /// The opening messages (system, task), once, before turn 1; for a repair trajectory with its
  /// seed as turn 0, in the same transaction.
  void record_initial_messages(int64_t trajectory_id, const std::vector<StoredMessage>& messages,
                               const std::optional<SeedTurn>& seed = std::nullopt);
  /// Ends a running trajectory. stopped_early/finished need the last turn complete; failed (the
  /// model API gave up, ...) may leave a partial turn, which reopen_trajectory lets the loop resume.
  void finish_trajectory(int64_t trajectory_id, TrajectoryStatus status, const std::string& reason);
  void reopen_trajectory(int64_t trajectory_id);  ///< refused for imported runs

  // ---- the steps of a turn (each one transaction; out of order or twice throws RunStoreError;
  //      refused for trajectories of imported runs)
  /// turn must be 1 + the last turn, which must be complete; the opening messages must exist.
  void begin_turn(int64_t trajectory_id, int64_t turn);
  /// The assistant message, its reasoning text (kept for fine-tuning records, docs/design.md §9; never sent
  /// back to the model by the store) and the call's usage, in one transaction.
  void record_model_answer(int64_t trajectory_id, int64_t turn, const std::string& answer, const ModelUsage& usage,
                           const std::string& reasoning = "");
  /// Stores the source (content-addressed) with its language and returns its SHA-256. The same
  /// bytes stored again keep the language they were first stored with.
  std::string record_candidate(int64_t trajectory_id, int64_t turn, const std::string& source,
                               CandidateLanguage language = CandidateLanguage::cuda);
  void record_extraction_error(int64_t trajectory_id, int64_t turn, const std::string& error);
  void record_submission(int64_t trajectory_id, int64_t turn, const std::string& task_id);
  /// The service lost the task (expired, deleted): the evaluation was submitted again.
  void record_resubmission(int64_t trajectory_id, int64_t turn, const std::string& old_task_id,
                           const std::string& new_task_id);
  /// The submission `task_id` ended INFRA_ERROR: the verdict is kept aside as the turn's next
  /// InfraAttempt and the turn goes back to candidate_extracted, so the loop submits it again
  /// (the model never sees it and the turn budget is not spent). Returns the attempt's number.
  int64_t record_infra_attempt(int64_t trajectory_id, int64_t turn, const std::string& task_id,
                               const ordered_json& verdict);
  /// `task_id` must be the current submission's, so a stale result cannot be attached. The
  /// document is stored as it came; one that Verdict::from_json cannot read is refused.
  /// Returns the verdict as read.
  Verdict record_verdict(int64_t trajectory_id, int64_t turn, const std::string& task_id, const ordered_json& verdict);
  void record_feedback(int64_t trajectory_id, int64_t turn, const std::string& feedback);
  /// From feedback_stored, verdict_stored, or an extraction error; with `end`, also finishes the
  /// trajectory in the same transaction (so no resume has to re-decide the stop).
  void complete_turn(int64_t trajectory_id, int64_t turn, const std::optional<TrajectoryEnd>& end = std::nullopt);

  // ---- reading
  [[nodiscard]] ResumePoint resume_point(int64_t trajectory_id) const;
  [[nodiscard]] std::vector<StoredMessage> messages(int64_t trajectory_id) const;
  [[nodiscard]] std::vector<TurnRecord> turns(int64_t trajectory_id) const;
  [[nodiscard]] std::vector<TurnRow> turn_rows(int64_t trajectory_id) const;
  /// A repair trajectory's seed (turn 0); nullopt for other trajectories and repair trajectories
  /// stored before schema 5.
  [[nodiscard]] std::optional<SeedTurn> seed_turn(int64_t trajectory_id) const;
  [[nodiscard]] std::optional<std::string> candidate_source(const std::string& sha256) const;
  /// The INFRA_ERROR evaluations kept aside for the trajectory's turns, in order.
  [[nodiscard]] std::vector<InfraAttempt> infra_attempts(int64_t trajectory_id) const;

 private:
  struct StepCheck;
  StepCheck require_step(int64_t trajectory_id, int64_t turn, std::initializer_list<TurnStep> allowed,
                         const char* action);
  /// The verdict of `task_id`, parsed, for a turn that waits for that task; RunStoreError otherwise.
  Verdict awaited_verdict(int64_t trajectory_id, int64_t turn, const std::string& task_id, const ordered_json& verdict,
                          const char* action);
  void require_running(int64_t trajectory_id, const char* action);
  /// The origin of the trajectory's run; throws RunStoreError for an unknown trajectory.
  [[nodiscard]] std::string origin_locked(int64_t trajectory_id) const;
  void require_measured(int64_t trajectory_id, const char* action) const;
  std::string insert_run_locked(const ordered_json& config, const std::string& model, const std::string& notes,
                                const std::string& origin, const std::string& gpu, const std::string& import_key,
                                RunStatus status);
  void import_turn_locked(int64_t trajectory_id, const ImportedTurn& turn);
  /// The run; RunStoreError when unknown.
  [[nodiscard]] RunInfo run_locked(const std::string& id) const;
  /// The calling process becomes the run's holder (inside the caller's transaction).
  void hold_locked(const std::string& id);
  void set_step(int64_t trajectory_id, int64_t turn, TurnStep step, const char* time_column);
  int64_t next_seq(int64_t trajectory_id);
  void insert_message(int64_t trajectory_id, int64_t turn, const std::string& role, const std::string& content,
                      const char* kind, const std::string& reasoning = "");
  void finish_locked(int64_t trajectory_id, TrajectoryStatus status, const std::string& reason);
  /// The trajectory; RunStoreError when unknown.
  [[nodiscard]] TrajectoryInfo trajectory_locked(int64_t trajectory_id) const;
  /// read(), the store's mutex held: the body of the one-query readers.
  template <class Read>
  auto locked(Read&& read) const {
    std::lock_guard lock(m_mutex);
    return read();
  }

  std::string m_path;
  mutable std::mutex m_mutex;
  mutable SqliteDb m_db;
};

}  // namespace ptxbench
