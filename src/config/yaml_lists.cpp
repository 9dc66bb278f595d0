// The list sections: auth tokens and static workers. Tokens are secrets, so their errors give
// a token's length or position, never its text. A static worker is held to the rules of
// POST /v1/workers (api/worker_registration.hpp), so the config cannot list a worker the API
// would refuse; its errors name the key ("workers[1].headers.Host"). A worker's secret, like a
// token, is never quoted in an error.
#include <algorithm>
#include <cctype>
#include <set>
#include <string>

#include "api/worker_registration.hpp"
#include "src/config/sections.hpp"
#include "src/config/values.hpp"

namespace jq::config::detail {
namespace {

constexpr std::size_t kMinTokenChars = 16;
constexpr std::string_view kAnyName = "*";

std::string token_text(const At& at) {
  if (!at.node.IsScalar()) fail(at, "must be a string of at least 16 characters");
  const std::string& text = at.node.Scalar();
  if (text.size() < kMinTokenChars) {
    throw ConfigError(at.path, "must be at least 16 characters (a random secret), got " +
                                   std::to_string(text.size()) + " characters");
  }
  const bool printable = std::all_of(text.begin(), text.end(),
                                     [](unsigned char c) { return std::isgraph(c) || c >= 0x80; });
  if (!printable) {
    throw ConfigError(at.path, "must not contain spaces or control characters");
  }
  return text;
}

Token parse_token(const At& at) {
  constexpr std::string_view kShape = "must be a map {token: ..., role: push|worker|admin}";
  if (!at.node.IsMap()) fail(at, kShape);
  expect_keys(at, {"token", "role"});
  Token token;
  token.token = token_text(required(at, "token", "every entry needs token: <a random secret>"));
  const At role = required(at, "role", "every entry needs role: push, worker or admin");
  token.role = role_from(role.path, string(role, "must be a string"));
  return token;
}

std::vector<Token> parse_tokens(const At& at) {
  std::vector<Token> tokens;
  for (const At& item : items(at, "must be a list of {token: ..., role: ...}")) {
    Token token = parse_token(item);
    const auto same = std::find_if(tokens.begin(), tokens.end(),
                                   [&](const Token& t) { return t.token == token.token; });
    if (same != tokens.end()) {
      throw ConfigError(join_path(item.path, "token"),
                        "repeats " + at.path + "[" + std::to_string(same - tokens.begin()) +
                            "].token; give each client its own token");
    }
    tokens.push_back(std::move(token));
  }
  return tokens;
}

std::string worker_url(const At& at) {
  std::string url =
      string(at, "must be an absolute http:// or https:// URL, e.g. http://10.0.0.5:9000/run");
  if (auto checked = api::check_worker_url(url); !checked) fail(at, checked.error());
  return url;
}

// Like the API, a name listed twice is kept once.
std::vector<std::string> worker_names(const At& at) {
  const std::string must = "must be a list of 1 to " + std::to_string(api::kMaxWorkerNames) +
                           " job names, or [\"*\"] for all";
  const std::vector<At> list = items(at, must);
  if (list.empty() || list.size() > api::kMaxWorkerNames) fail(at, must);
  std::vector<std::string> names;
  for (const At& item : list) {
    std::string name = string(item, api::kWorkerNameRule);
    if (!api::is_worker_name(name)) fail(item, api::kWorkerNameRule);
    if (name == kAnyName && list.size() > 1) {
      fail(item, "\"*\" (every name) must be the only entry");
    }
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      names.push_back(std::move(name));
    }
  }
  return names;
}

std::map<std::string, std::string> worker_headers(const At& at) {
  const auto list = entries(at, "must be a map of header names to strings");
  if (list.size() > api::kMaxWorkerHeaders) {
    fail(at, "may hold at most " + std::to_string(api::kMaxWorkerHeaders) + " headers");
  }
  std::map<std::string, std::string> headers;
  std::set<std::string> seen;  // api::worker_header_key of each name so far
  for (const auto& [name, value] : list) {
    if (auto checked = api::check_worker_header_name(name); !checked) {
      throw ConfigError(value.path, checked.error());
    }
    std::string text = string(value, "must be a string");
    if (auto checked = api::check_worker_header_value(text); !checked) fail(value, checked.error());
    if (!seen.insert(api::worker_header_key(name)).second) {
      throw ConfigError(value.path, "repeats a header name (header names ignore case)");
    }
    headers.emplace(name, std::move(text));
  }
  return headers;
}

std::string worker_secret(const At& at) {
  const std::string must = "must be a string of " + std::to_string(api::kMinWorkerSecretBytes) +
                           " to " + std::to_string(api::kMaxWorkerSecretBytes) + " bytes";
  if (!at.node.IsScalar()) fail(at, must);  // shows "a list" or "a map", not a value
  std::string text = at.node.Scalar();
  if (auto checked = api::check_worker_secret(text); !checked) {
    throw ConfigError(at.path, checked.error());
  }
  return text;
}

StaticWorker parse_worker(const At& at) {
  constexpr std::string_view kShape =
      "must be a map {url: http://..., names: [...], concurrency: 8, headers: {}, ca_file: ..., "
      "secret: ...}";
  if (!at.node.IsMap()) fail(at, kShape);
  expect_keys(at, {"url", "names", "concurrency", "headers", "ca_file", "secret"});
  StaticWorker worker;
  worker.url = worker_url(required(at, "url", "every worker needs url: http://host:port/path"));
  worker.names = worker_names(
      required(at, "names", "every worker needs names: a list of job names, or [\"*\"]"));
  if (auto v = field(at, "concurrency")) {
    worker.concurrency = static_cast<int>(
        integer(*v, 1, api::kMaxWorkerConcurrency,
                "must be an integer between 1 and " + std::to_string(api::kMaxWorkerConcurrency)));
  }
  if (auto v = field(at, "headers")) worker.headers = worker_headers(*v);
  if (auto v = field(at, "ca_file")) {
    worker.ca_file = string(*v, "must be a string: the path of a PEM file");
    if (auto checked = api::check_worker_ca_file(worker.ca_file, worker.url); !checked) {
      fail(*v, checked.error());
    }
  }
  if (auto v = field(at, "secret")) worker.secret = worker_secret(*v);
  return worker;
}

}  // namespace

Auth parse_auth(const At& at) {
  expect_keys(at, {"tokens", "allow_open"});
  Auth auth;
  auth.configured = true;
  if (auto v = field(at, "tokens")) auth.tokens = parse_tokens(*v);
  if (auto v = field(at, "allow_open")) auth.allow_open = boolean(*v);
  return auth;
}

std::vector<StaticWorker> parse_workers(const At& at) {
  std::vector<StaticWorker> workers;
  for (const At& item : items(at, "must be a list of {url: ..., names: [...]}")) {
    StaticWorker worker = parse_worker(item);
    const auto same = std::find_if(workers.begin(), workers.end(),
                                   [&](const StaticWorker& w) { return w.url == worker.url; });
    if (same != workers.end()) {
      throw ConfigError(join_path(item.path, "url"), "repeats " + at.path + "[" +
                                                         std::to_string(same - workers.begin()) +
                                                         "].url; list each worker endpoint once");
    }
    workers.push_back(std::move(worker));
  }
  return workers;
}

}  // namespace jq::config::detail
