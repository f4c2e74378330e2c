// SHA-256 for content-addressed caches (compile artifacts, workloads). Hex digests.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ptxbench {

class Sha256 {
 public:
  Sha256();
  Sha256& update(std::string_view data);
  /// Feeds a length-prefixed field, so that ("ab","c") and ("a","bc") hash differently.
  Sha256& field(std::string_view data);
  [[nodiscard]] std::string hex_digest();

 private:
  void block(const unsigned char* p);
  uint32_t m_state[8];
  unsigned char m_buffer[64];
  uint64_t m_length = 0;
  std::size_t m_fill = 0;
};

std::string sha256_hex(std::string_view data);

}  // namespace ptxbench
