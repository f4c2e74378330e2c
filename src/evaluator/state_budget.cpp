#include "evaluator/state_budget.h"

namespace ptxbench {

bool StateBudget::touch(const std::string& key) {
  auto it = m_entries.find(key);
  if (it == m_entries.end()) return false;
  m_order.splice(m_order.begin(), m_order, it->second.first);
  return true;
}

std::vector<std::string> StateBudget::admit(const std::string& key, uint64_t bytes) {
  std::vector<std::string> evict;
  if (touch(key)) return evict;
  while (!m_order.empty() && m_used + bytes > m_budget) {
    const std::string& victim = m_order.back();
    m_used -= m_entries.at(victim).second;
    evict.push_back(victim);
    m_entries.erase(victim);
    m_order.pop_back();
  }
  m_order.push_front(key);
  m_entries[key] = {m_order.begin(), bytes};
  m_used += bytes;
  return evict;
}

}  // namespace ptxbench
