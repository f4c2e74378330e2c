// SHA-256 through libcrypto's EVP interface (the digest OpenSSL maintains and accelerates with
// SHA-NI/AVX2 where the CPU has them).
#include "common/sha256.h"

#include <openssl/err.h>
#include <openssl/evp.h>

#include "common/error.h"

namespace ptxbench {
namespace {

constexpr const char* kLib = "OpenSSL";

[[noreturn]] void fail(const char* call) {
  unsigned long code = ERR_get_error();
  char text[256] = "no error queued";
  if (code != 0) ERR_error_string_n(code, text, sizeof text);
  ERR_clear_error();
  throw Error(kLib, std::string(call) + " failed: " + text);
}

void init(EVP_MD_CTX* ctx) {
  if (EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) != 1) fail("EVP_DigestInit_ex(SHA-256)");
}

std::string to_hex(const unsigned char* digest, unsigned int size) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(2 * size, '0');
  for (unsigned int i = 0; i < size; ++i) {
    out[2 * i] = kHex[digest[i] >> 4];
    out[2 * i + 1] = kHex[digest[i] & 0xf];
  }
  return out;
}

}  // namespace

void Sha256::FreeContext::operator()(evp_md_ctx_st* ctx) const noexcept { EVP_MD_CTX_free(ctx); }

Sha256::Sha256() : m_ctx(EVP_MD_CTX_new()) {
  if (!m_ctx) fail("EVP_MD_CTX_new");
  init(m_ctx.get());
}

Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

Sha256::Sha256(const Sha256& other) : m_ctx(EVP_MD_CTX_new()) {
  if (!m_ctx) fail("EVP_MD_CTX_new");
  if (EVP_MD_CTX_copy_ex(m_ctx.get(), other.m_ctx.get()) != 1) fail("EVP_MD_CTX_copy_ex");
}

Sha256& Sha256::operator=(const Sha256& other) {
  if (this != &other) *this = Sha256(other);
  return *this;
}

Sha256& Sha256::update(std::string_view data) {
  if (!m_ctx) m_ctx.reset(Sha256().m_ctx.release());  // a moved-from object starts over
  if (EVP_DigestUpdate(m_ctx.get(), data.data(), data.size()) != 1) fail("EVP_DigestUpdate");
  return *this;
}

Sha256& Sha256::field(std::string_view data) {
  update(std::to_string(data.size()));
  update(":");
  return update(data);
}

std::string Sha256::hex_digest() {
  if (!m_ctx) return sha256_hex("");
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_DigestFinal_ex(m_ctx.get(), digest, &size) != 1) fail("EVP_DigestFinal_ex");
  init(m_ctx.get());
  return to_hex(digest, size);
}

std::string sha256_hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &size, EVP_sha256(), nullptr) != 1) fail("EVP_Digest(SHA-256)");
  return to_hex(digest, size);
}

}  // namespace ptxbench
