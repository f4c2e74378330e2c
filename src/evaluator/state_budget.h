// Which cached workload states a worker keeps (docs/design.md §8: workload state cached with a memory
// budget): least recently used first out, so that admitting a new state keeps the total under the
// budget. A state larger than the whole budget is still admitted, alone.
#pragma once

#include <cstdint>
#include <list>
#include <string>
#include <unordered_map>
#include <vector>

namespace ptxbench {

class StateBudget {
 public:
  explicit StateBudget(uint64_t budget_bytes) : m_budget(budget_bytes) {}
  /// Marks a cached key as just used; false when it is not cached.
  bool touch(const std::string& key);
  /// Admits `key` of `bytes` and returns the keys to evict first (least recently used first).
  std::vector<std::string> admit(const std::string& key, uint64_t bytes);
  [[nodiscard]] uint64_t used() const noexcept { return m_used; }
  [[nodiscard]] uint64_t budget() const noexcept { return m_budget; }
  [[nodiscard]] std::size_t size() const noexcept { return m_order.size(); }

 private:
  uint64_t m_budget, m_used = 0;
  std::list<std::string> m_order;  // front: most recently used
  std::unordered_map<std::string, std::pair<std::list<std::string>::iterator, uint64_t>> m_entries;
};

}  // namespace ptxbench
