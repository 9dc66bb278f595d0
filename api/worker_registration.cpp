// POST /v1/workers: a table of field rules (field_map.hpp), one per registration field.
#include "api/worker_registration.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <set>

#include "api/field_map.hpp"
#include "api/field_values.hpp"
#include "api/http_url.hpp"
#include "api/job.hpp"
#include "api/request_body.hpp"

namespace jq::api {

namespace {

// Headers the master sets on every dispatch (the last two on signed ones); a registration may not
// override them.
constexpr std::array<std::string_view, 7> kReservedHeaders{
    "Host",         "Content-Type",   "Content-Length", "X-Jq-Job-Id",
    "X-Jq-Attempt", "X-Jq-Timestamp", "X-Jq-Signature"};

// Headers that say how the message is framed, encoded or how the connection goes on: the master
// sends a plain body of Content-Length bytes on a keep-alive connection, and one of these would
// make the worker read it otherwise (Transfer-Encoding: chunked) or fail every dispatch.
constexpr std::array<std::string_view, 8> kFramingHeaders{
    "Transfer-Encoding", "Content-Encoding", "Connection", "Keep-Alive", "TE",
    "Trailer",           "Upgrade",          "Expect"};

template <std::size_t N>
bool is_one_of(std::string_view name, const std::array<std::string_view, N>& headers) {
  const std::string key = worker_header_key(name);
  for (std::string_view header : headers) {
    if (key == worker_header_key(header)) return true;
  }
  return false;
}

// Well-formed UTF-8 (RFC 3629): no stray continuation bytes, overlong forms, surrogates or
// code points past U+10FFFF. A registration is stored as JSON text, which carries only that.
bool is_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto b = static_cast<unsigned char>(text[i]);
    std::size_t more = 0;
    unsigned char low = 0x80, high = 0xBF;  // the range of the byte after the lead byte
    if (b < 0x80) {
      more = 0;
    } else if (b >= 0xC2 && b <= 0xDF) {
      more = 1;
    } else if (b >= 0xE0 && b <= 0xEF) {
      more = 2;
      if (b == 0xE0) low = 0xA0;   // overlong below U+0800
      if (b == 0xED) high = 0x9F;  // surrogates
    } else if (b >= 0xF0 && b <= 0xF4) {
      more = 3;
      if (b == 0xF0) low = 0x90;   // overlong below U+10000
      if (b == 0xF4) high = 0x8F;  // past U+10FFFF
    } else {
      return false;
    }
    if (text.size() - i - 1 < more) return false;
    for (std::size_t k = 1; k <= more; ++k) {
      const auto c = static_cast<unsigned char>(text[i + k]);
      if (c < (k == 1 ? low : 0x80) || c > (k == 1 ? high : 0xBF)) return false;
    }
    i += more + 1;
  }
  return true;
}

// RFC 9110 token: the characters a header name may hold.
bool is_http_token(std::string_view name) {
  static constexpr std::string_view kSymbols = "!#$%&'*+-.^_`|~";
  if (name.empty()) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && kSymbols.find(c) == kSymbols.npos) {
      return false;
    }
  }
  return true;
}

Expected<void, ApiError> apply_url(WorkerRegistration& reg, std::string_view value) {
  const auto url = read_string_field("url", value);
  if (!url) return unexpected(url.error());
  if (auto checked = check_worker_url(*url); !checked) {
    return unexpected(
        field_error("url", "url " + checked.error() + ", got " + describe_value(value)));
  }
  reg.url = std::string(*url);
  return {};
}

ApiError names_error(std::string message) {
  return field_error("names", std::move(message));
}

// One element of `names`: a job name, or "*" (checked by the caller to stand alone).
Expected<std::string_view, ApiError> read_worker_name(std::size_t i, std::string_view value) {
  const std::string where = "names[" + std::to_string(i) + "]";
  const auto name = MsgpackReader(value).read_str();
  if (name && is_worker_name(*name)) return *name;
  return unexpected(
      names_error(where + " " + std::string(kWorkerNameRule) + ", got " + describe_value(value)));
}

Expected<void, ApiError> apply_names(WorkerRegistration& reg, std::string_view value) {
  MsgpackReader reader(value);
  const auto count = reader.read_array_header();
  if (!count || *count == 0 || *count > kMaxWorkerNames) {
    return unexpected(
        names_error("names must be an array of 1 to " + std::to_string(kMaxWorkerNames) +
                    " job names, or [\"*\"] for every name, got " +
                    (count ? std::to_string(*count) + " names" : describe_value(value))));
  }
  std::set<std::string_view> seen;
  for (std::uint32_t i = 0; i < *count; ++i) {
    const auto name = read_worker_name(i, reader.skip().value_or(""));
    if (!name) return unexpected(name.error());
    if (*name == "*" && *count > 1) {
      return unexpected(names_error("names may be [\"*\"] alone, not \"*\" among other names"));
    }
    if (seen.insert(*name).second) reg.names.emplace_back(*name);
  }
  return {};
}

Expected<void, ApiError> apply_concurrency(WorkerRegistration& reg, std::string_view value) {
  const auto concurrency = read_int_field("concurrency", value, 1, kMaxWorkerConcurrency);
  if (!concurrency) return unexpected(concurrency.error());
  reg.concurrency = static_cast<int>(*concurrency);
  return {};
}

ApiError headers_error(std::string message) {
  return field_error("headers", std::move(message));
}

// One headers entry; `seen` holds the worker_header_key of each name so far.
Expected<void, ApiError> add_header(WorkerRegistration& reg, std::set<std::string>& seen,
                                    std::string_view key, std::string_view value) {
  const auto name = MsgpackReader(key).read_str();
  const auto text = MsgpackReader(value).read_str();
  if (!name || !text) {
    return unexpected(headers_error("headers must map header names to string values, got " +
                                    describe_value(key) + ": " + describe_value(value)));
  }
  const std::string shown = describe_value(key);
  if (auto checked = check_worker_header_name(*name); !checked) {
    return unexpected(headers_error(shown + " " + checked.error()));
  }
  if (auto checked = check_worker_header_value(*text); !checked) {
    return unexpected(headers_error("the value of " + shown + " " + checked.error()));
  }
  if (!seen.insert(worker_header_key(*name)).second) {
    return unexpected(headers_error(shown + " appears more than once"));
  }
  reg.headers.emplace_back(*name, *text);
  return {};
}

Expected<void, ApiError> apply_headers(WorkerRegistration& reg, std::string_view value) {
  MsgpackReader reader(value);
  const auto count = reader.read_map_header();
  if (!count) {
    return unexpected(headers_error("headers must be a map of header names to strings, got " +
                                    describe_value(value)));
  }
  if (*count > kMaxWorkerHeaders) {
    return unexpected(headers_error("headers may hold at most " +
                                    std::to_string(kMaxWorkerHeaders) + " entries, got " +
                                    std::to_string(*count)));
  }
  std::set<std::string> seen;
  for (std::uint32_t i = 0; i < *count; ++i) {
    const std::string_view key = reader.skip().value_or("");
    const std::string_view text = reader.skip().value_or("");
    if (auto added = add_header(reg, seen, key, text); !added) return added;
  }
  return {};
}

Expected<void, ApiError> apply_ttl(WorkerRegistration& reg, std::string_view value) {
  const auto ttl = read_seconds_field("ttl", value, kMaxWorkerTtlSeconds);
  if (!ttl) return unexpected(ttl.error());
  reg.ttl = *ttl;
  return {};
}

Expected<void, ApiError> apply_ca_file(WorkerRegistration& reg, std::string_view value) {
  const auto path = read_string_field("ca_file", value);
  if (!path) return unexpected(path.error());
  reg.ca_file = std::string(*path);
  return {};
}

// The message names the value's type or length only: even a mistyped secret is not echoed.
Expected<void, ApiError> apply_secret(WorkerRegistration& reg, std::string_view value) {
  const auto secret = MsgpackReader(value).read_str();
  if (!secret) {
    return unexpected(field_error("secret", "secret must be a string of " +
                                                std::to_string(kMinWorkerSecretBytes) + " to " +
                                                std::to_string(kMaxWorkerSecretBytes) +
                                                " bytes, got a value of another type"));
  }
  if (auto checked = check_worker_secret(*secret); !checked) {
    return unexpected(field_error("secret", "secret " + checked.error()));
  }
  reg.secret = std::string(*secret);
  return {};
}

constexpr std::array<FieldRule<WorkerRegistration>, 7> kRegistrationRules{{
    {"url", true, apply_url},
    {"names", true, apply_names},
    {"concurrency", false, apply_concurrency},
    {"headers", false, apply_headers},
    {"ttl", false, apply_ttl},
    {"ca_file", false, apply_ca_file},
    {"secret", false, apply_secret},
}};

constexpr FieldMapSpec kRegistrationSpec{"a worker registration", "", false};

}  // namespace

Expected<void, std::string> check_worker_url(std::string_view url) {
  if (url.size() > kMaxWorkerUrlBytes) {
    return unexpected("must be at most " + std::to_string(kMaxWorkerUrlBytes) +
                      " bytes (this one has " + std::to_string(url.size()) + ")");
  }
  if (auto parsed = parse_http_url(url, UrlSchemes::http_or_https); !parsed) {
    return unexpected(parsed.error());
  }
  return {};
}

Expected<void, std::string> check_worker_ca_file(std::string_view ca_file, std::string_view url) {
  const bool printable = std::all_of(ca_file.begin(), ca_file.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x20 && u != 0x7f;
  });
  if (ca_file.empty() || ca_file.size() > kMaxCaFileBytes || !printable) {
    return unexpected("must be the path of a PEM file on the master, 1-" +
                      std::to_string(kMaxCaFileBytes) + " bytes without control characters");
  }
  const auto parsed = parse_http_url(url, UrlSchemes::http_or_https);
  if (parsed && !parsed->https) {
    return unexpected(std::string("applies to https:// workers only; this url is http://"));
  }
  return {};
}

bool is_worker_name(std::string_view name) {
  return name == "*" || is_valid_job_name(name);
}

Expected<void, std::string> check_worker_header_name(std::string_view name) {
  if (!is_http_token(name)) {
    return unexpected(
        std::string("is not a valid HTTP header name (letters, digits and !#$%&'*+-.^_`|~ only)"));
  }
  if (is_one_of(name, kReservedHeaders)) {
    return unexpected(std::string("is set by the master and cannot be registered"));
  }
  if (is_one_of(name, kFramingHeaders)) {
    return unexpected(std::string(
        "says how the message is framed or the connection kept, which the master does itself "
        "(a plain body of Content-Length bytes on a keep-alive connection): it cannot be "
        "registered"));
  }
  return {};
}

Expected<void, std::string> check_worker_header_value(std::string_view value) {
  const bool safe = value.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
  if (!safe || value.size() > kMaxWorkerHeaderValueBytes) {
    return unexpected("must be at most " + std::to_string(kMaxWorkerHeaderValueBytes) +
                      " bytes without CR, LF or NUL");
  }
  if (!is_utf8(value)) return unexpected(std::string("must be valid UTF-8 text"));
  return {};
}

Expected<void, std::string> check_worker_secret(std::string_view secret) {
  if (secret.size() < kMinWorkerSecretBytes || secret.size() > kMaxWorkerSecretBytes) {
    return unexpected("must be " + std::to_string(kMinWorkerSecretBytes) + " to " +
                      std::to_string(kMaxWorkerSecretBytes) + " bytes, got " +
                      std::to_string(secret.size()) + " bytes");
  }
  return {};
}

std::string worker_header_key(std::string_view name) {
  std::string key(name);
  for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return key;
}

Expected<WorkerRegistration, ApiError> decode_worker_registration(std::string_view body,
                                                                  MediaType type) {
  const auto bytes = request_msgpack(body, type);
  if (!bytes) return unexpected(bytes.error());
  WorkerRegistration reg;
  const auto decoded = decode_field_map(*bytes, kRegistrationRules, kRegistrationSpec, reg);
  if (!decoded) return unexpected(decoded.error());
  if (was_given(*decoded, kRegistrationRules, "ca_file")) {
    if (auto checked = check_worker_ca_file(reg.ca_file, reg.url); !checked) {
      return unexpected(field_error("ca_file", "ca_file " + checked.error()));
    }
  }
  return reg;
}

}  // namespace jq::api
