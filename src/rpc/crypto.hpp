// The few cryptographic primitives the RPC layer needs, over OpenSSL's
// libcrypto. Nothing here knows about tokens or gRPC.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/strings.hpp"

namespace drover::rpc {

using Sha256Digest = std::array<uint8_t, 32>;

Sha256Digest sha256(std::string_view data);
Sha256Digest hmac_sha256(std::string_view key, std::string_view message);
// Bytes from the operating system's CSPRNG. Aborts if it fails: a daemon that
// cannot get randomness must not mint nonces or keys.
std::string random_bytes(std::size_t count);
// to_hex and from_hex: common/strings.hpp.
// Equality in time that does not depend on where the inputs differ.
bool constant_time_equal(std::string_view a, std::string_view b);
// A fresh request id for RequestHeader.request_id: 32 lowercase hex digits.
std::string new_request_id();

}  // namespace drover::rpc
