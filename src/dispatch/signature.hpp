// Signed dispatches (the contract's "Signed dispatches"): a worker registered with a secret gets
// X-Jq-Timestamp and X-Jq-Signature on every attempt, so it can tell the master's requests from
// anyone else's and refuse replays older than its window.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/expected.hpp"
#include "src/dispatch/worker_call.hpp"

namespace jq::dispatch {

inline constexpr std::string_view kTimestampHeader = "X-Jq-Timestamp";
inline constexpr std::string_view kSignatureHeader = "X-Jq-Signature";

// The X-Jq-Signature value: "v1=" + lower-case hex of HMAC-SHA256(secret, timestamp "." body).
// The body is fed to the MAC in place, not copied. An error (OpenSSL could not compute it) says
// why; the caller then must not send the request unsigned.
Expected<std::string, std::string> dispatch_signature(std::string_view secret,
                                                      std::string_view timestamp,
                                                      std::string_view body);

// Adds both headers to `call`, signed over its body as it will be sent, at `now_s` (Unix
// seconds: each attempt is signed when it is sent, so a retry carries a fresh timestamp).
Expected<void, std::string> sign_call(WorkerCall& call, std::string_view secret,
                                      std::int64_t now_s);

}  // namespace jq::dispatch
