// The list sections: auth tokens and static workers. Tokens are secrets, so their errors give
// a token's length or position, never its text.
#include <algorithm>
#include <cctype>
#include <string>

#include "src/config/sections.hpp"
#include "src/config/values.hpp"

namespace jq::config::detail {
namespace {

constexpr std::size_t kMinTokenChars = 16;
constexpr long long kMaxConcurrency = 10000;
constexpr std::size_t kMaxWorkerNames = 1000;
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
  constexpr std::string_view kMust =
      "must be an absolute http:// URL, e.g. http://10.0.0.5:9000/run";
  constexpr std::string_view kScheme = "http://";
  std::string url = string(at, kMust);
  if (!url.starts_with(kScheme) || url.size() == kScheme.size()) fail(at, kMust);
  return url;
}

std::vector<std::string> worker_names(const At& at) {
  constexpr std::string_view kMust = "must be a list of 1 to 1000 job names, or [\"*\"] for all";
  const std::vector<At> list = items(at, kMust);
  if (list.empty() || list.size() > kMaxWorkerNames) fail(at, kMust);
  std::vector<std::string> names;
  for (const At& item : list) {
    names.push_back(non_empty_string(item, "must be a job name"));
    if (names.back() == kAnyName && list.size() > 1) {
      fail(item, "\"*\" (every name) must be the only entry");
    }
  }
  return names;
}

bool is_header_name(std::string_view name) {
  constexpr std::string_view kSymbols = "!#$%&'*+-.^_`|~";
  return !name.empty() && std::all_of(name.begin(), name.end(), [&](unsigned char c) {
    return std::isalnum(c) || kSymbols.find(static_cast<char>(c)) != std::string_view::npos;
  });
}

std::map<std::string, std::string> worker_headers(const At& at) {
  std::map<std::string, std::string> headers;
  for (const auto& [name, value] : entries(at, "must be a map of header names to strings")) {
    if (!is_header_name(name)) {
      throw ConfigError(value.path, "is not a valid HTTP header name (letters, digits, -, _)");
    }
    std::string text = string(value, "must be a string");
    if (text.find_first_of("\r\n") != std::string::npos || text.find('\0') != std::string::npos) {
      fail(value, "must not contain line breaks");
    }
    headers.emplace(name, std::move(text));
  }
  return headers;
}

StaticWorker parse_worker(const At& at) {
  constexpr std::string_view kShape =
      "must be a map {url: http://..., names: [...], concurrency: 8, headers: {}}";
  if (!at.node.IsMap()) fail(at, kShape);
  expect_keys(at, {"url", "names", "concurrency", "headers"});
  StaticWorker worker;
  worker.url = worker_url(required(at, "url", "every worker needs url: http://host:port/path"));
  worker.names = worker_names(
      required(at, "names", "every worker needs names: a list of job names, or [\"*\"]"));
  if (auto v = field(at, "concurrency")) {
    worker.concurrency =
        static_cast<int>(integer(*v, 1, kMaxConcurrency, "must be an integer between 1 and 10000"));
  }
  if (auto v = field(at, "headers")) worker.headers = worker_headers(*v);
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
