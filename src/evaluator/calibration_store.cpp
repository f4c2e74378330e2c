#include "evaluator/calibration_store.h"

#include <fcntl.h>
#include <sys/file.h>

#include <cctype>

#include "common/error.h"
#include "common/fd.h"
#include "common/json_check.h"

namespace ptxbench {

namespace {

// Held while a store's file is read or written: several workers of one GPU share it.
Fd lock_file(const fs::path& file) {
  fs::path lock_path = file.string() + ".lock";
  Fd lock(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (!lock.valid() || ::flock(lock.get(), LOCK_EX) != 0)
    throw EnvironmentError("calibration", "cannot lock " + lock_path.string());
  return lock;
}

ordered_json read_document(const fs::path& file) {
  if (!fs::exists(file)) return ordered_json::object();
  try {
    ordered_json doc = ordered_json::parse(read_file(file));
    return doc.is_object() ? doc : ordered_json::object();
  } catch (const std::exception&) {
    return ordered_json::object();  // a damaged file recalibrates rather than stopping evaluations
  }
}

std::vector<double> values_of(const ordered_json& doc, const std::string& key) {
  std::vector<double> values;
  auto it = doc.find(key);
  if (it == doc.end() || !it->is_array()) return values;
  for (const auto& v : *it)
    if (v.is_number()) values.push_back(v.get<double>());
  return values;
}

}  // namespace

CalibrationStore::CalibrationStore(const std::string& gpu_key, const std::string& kind, const fs::path& root) {
  std::string name;
  for (char c : gpu_key) name += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' ? c : '_';
  if (!kind.empty()) name += "." + kind;
  fs::path dir = root.empty() ? cache_root() / "calibration" : root;
  fs::create_directories(dir);
  m_file = dir / (name + ".json");
}

std::vector<double> CalibrationStore::update(const std::string& key, std::size_t keep, const Decide& decide) {
  Fd lock = lock_file(m_file);
  ordered_json doc = read_document(m_file);
  std::vector<double> kept = values_of(doc, key);
  if (std::optional<double> joins = decide(kept)) {
    kept.push_back(*joins);
    if (kept.size() > keep) kept.erase(kept.begin(), kept.end() - static_cast<std::ptrdiff_t>(keep));
    doc[key] = kept;
    write_file_atomic(m_file, doc.dump(1));
  }
  return kept;
}

std::vector<double> CalibrationStore::read(const std::string& key) const {
  Fd lock = lock_file(m_file);
  return values_of(read_document(m_file), key);
}

}  // namespace ptxbench
