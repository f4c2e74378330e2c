// One request to a teacher model, asked again while its answers are refused, and the file cache of
// its outcome: the loop and the cache that the reasoning of fine-tuning records
// (reasoning_synthesis.h) and the repair notes (note_synthesis.h) share (issue 19).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "llm/model_client.h"
#include "common/fs.h"
#include "common/json_check.h"

namespace ptxbench {

/// The rejection of an answer that stopped at max_tokens: it is refused unread.
inline constexpr const char* kCutAnswerRejection = "the answer was cut at the max_tokens limit";

/// What a reader makes of one answer: the value kept (accepted), or why the answer is refused.
struct AnswerCheck {
  std::optional<std::string> value;  ///< set: accepted
  std::string rejection;             ///< otherwise: why ("too short: 120 characters, ...")
  static AnswerCheck accept(std::string value) { return {std::move(value), {}}; }
  static AnswerCheck reject(std::string why) { return {std::nullopt, std::move(why)}; }
};

/// The outcome of one request.
struct TeacherOutcome {
  bool accepted = false;
  std::string value;                    ///< the accepted answer's value ("" when refused every time)
  int attempts = 0;                     ///< teacher calls it took (for a cached outcome: as recorded)
  std::vector<std::string> rejections;  ///< why each refused answer was refused, in order
  bool from_cache = false;
};

/// The messages of the next call, from the rejections so far (none for the first call).
using TeacherPromptFn = std::function<ChatRequest(const std::vector<std::string>& rejections)>;
/// Reads one answer's text.
using AnswerReader = std::function<AnswerCheck(const std::string& answer)>;

/// Up to `attempts` calls, until one answer is accepted: each call's messages come from
/// `prompt(rejections so far)`, so a call after a refusal can name it; an answer cut at max_tokens
/// is refused unread (kCutAnswerRejection), any other is given to `read`. `calls` counts each call
/// made. A call that fails for good (ModelApiError) propagates.
TeacherOutcome ask_teacher(ModelClient& client, int attempts, const TeacherPromptFn& prompt, const AnswerReader& read,
                           std::atomic<int64_t>& calls);

/// A folder of outcomes, one JSON file per request key (DIR/KEY.json, written atomically, so
/// concurrent requests and processes never see half an entry):
///   {"schema": SCHEMA, ...header, "key", "accepted", "attempts", "rejections", VALUE_FIELD, ...trailer}
/// ("key" keeps its place when the header holds it). The folder is created by the first store.
class TeacherCache {
 public:
  TeacherCache(fs::path dir, std::string schema, std::string value_field);

  [[nodiscard]] const fs::path& dir() const noexcept { return m_dir; }
  [[nodiscard]] fs::path path(const std::string& key) const;

  /// The outcome stored under `key` when it may be used now: accepted, and `still_valid(value)`
  /// (the limits in force may be stricter than those it was accepted under); or refused after at
  /// least `attempts` calls (raise attempts to ask again). nullopt otherwise, and for a missing,
  /// damaged or foreign entry (it is asked again and overwritten).
  [[nodiscard]] std::optional<TeacherOutcome> load(const std::string& key, int attempts,
                                                   const std::function<bool(const std::string& value)>& still_valid) const;

  /// Writes the entry of `key`, whatever the outcome. `header` (an object, or null) goes after
  /// "schema", `trailer` (an object, or null) after the value.
  void store(const std::string& key, const ordered_json& header, const TeacherOutcome& outcome,
             const ordered_json& trailer = nullptr) const;

 private:
  fs::path m_dir;
  std::string m_schema;
  std::string m_value_field;
};

/// Runs `work(i)` for i in [0, n) on up to `threads` threads (the calling one included): the
/// teacher's requests in flight. The first exception stops the others taking new items and is
/// rethrown once all have finished; the items finished before stay finished.
template <class Work>
void for_each_request(std::size_t n, int threads, Work work) {
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto run = [&] {
    while (!failed.load()) {
      std::size_t i = next++;
      if (i >= n) return;
      try {
        work(i);
      } catch (...) {
        std::lock_guard lock(error_mutex);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
  };
  std::size_t count = std::min<std::size_t>(n, static_cast<std::size_t>(std::max(1, threads)));
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < count; ++t) pool.emplace_back(run);
  run();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace ptxbench
