// Measurements that a GPU's workers keep across evaluations (the baseline's time, the Triton launch
// path): one JSON file per physical GPU and kind under the cache folder, a list of recent values
// per key, read and changed under a file lock so that the workers of one GPU take turns.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/fs.h"

namespace ptxbench {

class CalibrationStore {
 public:
  /// The store of the GPU named by `gpu_key` (model and PCI bus id) under `root` (default
  /// cache_root()/calibration): `<gpu>.json`, or `<gpu>.<kind>.json` for another kind of measurement.
  CalibrationStore(const std::string& gpu_key, const std::string& kind = "", const fs::path& root = {});

  /// What joins the list of a key, given the values kept so far (oldest first); nullopt: nothing.
  using Decide = std::function<std::optional<double>(const std::vector<double>& kept)>;
  /// Under the lock: reads the values of `key`, asks `decide`, appends its value (keeping the last
  /// `keep`) and writes the file. Returns the values kept now (oldest first). A damaged file counts
  /// as empty (the GPU recalibrates rather than stopping evaluations). Throws EnvironmentError when
  /// the lock cannot be taken.
  std::vector<double> update(const std::string& key, std::size_t keep, const Decide& decide);
  /// The values of `key` (oldest first), under the lock; empty when none.
  [[nodiscard]] std::vector<double> read(const std::string& key) const;
  [[nodiscard]] const fs::path& file() const noexcept { return m_file; }

 private:
  fs::path m_file;
};

}  // namespace ptxbench
