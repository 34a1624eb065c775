#include "rpc/crypto.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cstdio>
#include <cstdlib>

namespace drover::rpc {

Sha256Digest sha256(std::string_view data) {
  Sha256Digest out{};
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), out.data(), &len, EVP_sha256(), nullptr) != 1 ||
      len != out.size()) {
    std::fputs("drover: OpenSSL SHA-256 failed\n", stderr);
    std::abort();
  }
  return out;
}

Sha256Digest hmac_sha256(std::string_view key, std::string_view message) {
  Sha256Digest out{};
  unsigned int len = 0;
  const auto* msg = reinterpret_cast<const unsigned char*>(message.data());
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), msg, message.size(),
           out.data(), &len) == nullptr ||
      len != out.size()) {
    std::fputs("drover: OpenSSL HMAC-SHA256 failed\n", stderr);
    std::abort();
  }
  return out;
}

std::string random_bytes(std::size_t count) {
  std::string out(count, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(count)) != 1) {
    std::fputs("drover: OpenSSL RAND_bytes failed (no entropy source?)\n", stderr);
    std::abort();
  }
  return out;
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string new_request_id() { return to_hex(random_bytes(16)); }

}  // namespace drover::rpc
