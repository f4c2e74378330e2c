// SHA-256 for content-addressed caches (compile artifacts, workloads). Hex digests. Computed by
// OpenSSL's libcrypto (EVP); this header keeps OpenSSL's out of every includer.
#pragma once

#include <memory>
#include <string>
#include <string_view>

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX

namespace ptxbench {

/// An incremental digest. Throws Error("OpenSSL", ...) only if libcrypto itself fails (out of
/// memory, a FIPS provider without SHA-256).
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256& other);  ///< the same state: both continue independently
  Sha256& operator=(const Sha256& other);
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;

  Sha256& update(std::string_view data);
  /// Feeds a length-prefixed field, so that ("ab","c") and ("a","bc") hash differently.
  Sha256& field(std::string_view data);
  /// The digest of everything fed so far, as 64 lower-case hex digits; the object then starts
  /// over empty.
  [[nodiscard]] std::string hex_digest();

 private:
  struct FreeContext {
    void operator()(evp_md_ctx_st* ctx) const noexcept;
  };
  std::unique_ptr<evp_md_ctx_st, FreeContext> m_ctx;
};

std::string sha256_hex(std::string_view data);

}  // namespace ptxbench
