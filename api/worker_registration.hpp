// POST /v1/workers bodies: a worker endpoint and the job names it serves.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/error.hpp"
#include "api/media_type.hpp"
#include "common/expected.hpp"

namespace jq::api {

inline constexpr std::size_t kMaxWorkerNames = 1000;
inline constexpr int kMaxWorkerConcurrency = 10000;
inline constexpr int kDefaultWorkerConcurrency = 8;
inline constexpr std::size_t kMaxWorkerUrlBytes = 2048;
inline constexpr std::size_t kMaxWorkerHeaders = 64;
inline constexpr std::size_t kMaxWorkerHeaderValueBytes = 8192;
inline constexpr double kMaxWorkerTtlSeconds = 86400.0 * 365;
inline constexpr std::size_t kMaxCaFileBytes = 4096;  // the path's length
inline constexpr std::size_t kMinWorkerSecretBytes = 16;
inline constexpr std::size_t kMaxWorkerSecretBytes = 256;

struct WorkerRegistration {
  std::string url;                              // absolute http:// or https:// URL
  std::vector<std::string> names;               // job names, or exactly {"*"} for every name
  int concurrency = kDefaultWorkerConcurrency;  // 1-10000
  std::vector<std::pair<std::string, std::string>> headers;  // sent with every dispatch
  std::optional<std::chrono::milliseconds> ttl;              // heartbeat period; absent = forever
  // https only: a PEM file of the CAs its certificate must chain to, read by the master; empty:
  // the system store and tls.ca_file. Whether the file can be loaded is checked by the handler.
  std::string ca_file;
  std::string secret;  // signs every dispatch (HMAC-SHA256); empty = unsigned. Never shown back.
};

// The rules of the fields above on values already read, shared by the decoder below and the
// static workers of the config file so that both refuse the same things. An error is a phrase
// whose subject is the field or the header: "must not contain user:password@; ...".
Expected<void, std::string> check_worker_url(std::string_view url);
// The ca_file path's shape (1-4096 bytes, no control characters), for an https:// `url` only.
Expected<void, std::string> check_worker_ca_file(std::string_view ca_file, std::string_view url);
inline constexpr std::string_view kWorkerNameRule =
    "must be a job name (1-128 bytes of A-Z a-z 0-9 _ . : -, not starting with '.', ':' or '-') "
    "or \"*\"";
bool is_worker_name(std::string_view name);  // a job name, or "*" for every name
Expected<void, std::string> check_worker_header_name(std::string_view name);
Expected<void, std::string> check_worker_header_value(std::string_view value);
// A secret is a key, never shown: an error gives its length, not its text.
Expected<void, std::string> check_worker_secret(std::string_view secret);
// Header names are case-insensitive: two names repeat when their keys are equal.
std::string worker_header_key(std::string_view name);

// Errors: bad_request (not a map), invalid_job with `field` (unknown key, bad url, bad name...).
// Duplicate names are dropped (first occurrence kept). Header names may not be ones the master
// sets itself (Host, Content-Type, Content-Length, X-Jq-Job-Id, X-Jq-Attempt, X-Jq-Timestamp,
// X-Jq-Signature), nor ones about the message's framing or the connection (Transfer-Encoding,
// Content-Encoding, Connection, Keep-Alive, TE, Trailer, Upgrade, Expect), nor repeat.
Expected<WorkerRegistration, ApiError> decode_worker_registration(std::string_view body,
                                                                  MediaType type);

}  // namespace jq::api
