// The YAML document onto the defaults. A section that is absent or null keeps its defaults
// (`auth` is marked present: config::load refuses one with neither tokens nor allow_open); every
// key present is checked.
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <climits>
#include <sstream>

#include "api/job.hpp"
#include "src/config/sections.hpp"
#include "src/config/values.hpp"

namespace jq::config {
namespace detail {
namespace {

constexpr long long kMaxIoThreads = 256;
constexpr long long kMaxShards = 1024;
constexpr long long kMaxRetry = 1000;
constexpr double kMaxTimeoutS = 86400;
constexpr long long kMinBodyBytes = 1024;
constexpr long long kMaxBodyBytes = 1LL << 30;
constexpr long long kMaxConnections = 1'000'000;
constexpr long long kMaxJobNameLabels = 10'000;

constexpr std::string_view kString = "must be a string";
// Durations in seconds: at most a year, as a job's unique_for, so that every one fits the
// clocks' integer counts (retry.base: 1e15 made a retry due in the year 765).
constexpr std::string_view kPositiveSeconds =
    "must be a number of seconds greater than 0 and at most 31536000 (365 days)";

bool positive(double value) {
  return value > 0 && value <= api::kMaxUniqueForSeconds;
}

bool up_to_a_second(double value) {
  return value >= 0 && value <= 1;
}

std::string format_number(double value) {
  char buf[32];
  const auto result = std::to_chars(buf, buf + sizeof buf, value);
  return std::string(buf, result.ptr);
}

Redis parse_redis(const At& at) {
  expect_keys(at, {"url", "server_path", "replicas_ack", "replicas_ack_timeout"});
  Redis redis;
  if (auto v = field(at, "url")) redis.url = redis_url_from(v->path, string(*v, kString));
  if (auto v = field(at, "server_path")) {
    redis.server_path = non_empty_string(*v,
                                         "must name the redis-server program (a path or a "
                                         "name looked up on PATH)");
  }
  if (auto v = field(at, "replicas_ack")) {
    redis.replicas_ack = static_cast<int>(integer(
        *v, 0, 16, "must be an integer from 0 (do not wait for replicas) to 16 (replicas)"));
  }
  if (auto v = field(at, "replicas_ack_timeout")) {
    redis.replicas_ack_timeout_s = number(
        *v, [](double s) { return s > 0 && s <= 5; },
        "must be a number of seconds greater than 0 and at most 5 (the WAIT holds the pushes' "
        "connection to that Redis node, which is reset when a command waits 10 s)");
  }
  return redis;
}

Defaults parse_defaults(const At& at) {
  expect_keys(at, {"max_retry", "timeout", "result_ttl", "unique_for"});
  Defaults defaults;
  if (auto v = field(at, "max_retry")) {
    defaults.max_retry = static_cast<int>(
        integer(*v, 0, kMaxRetry, "must be an integer between 0 (never retry) and 1000"));
  }
  if (auto v = field(at, "timeout")) {
    defaults.timeout_s = number(
        *v, [](double s) { return s > 0 && s <= kMaxTimeoutS; },
        "must be a number of seconds greater than 0 and at most 86400");
  }
  if (auto v = field(at, "result_ttl")) {
    defaults.result_ttl_s = static_cast<int>(
        integer(*v, 1, INT_MAX, "must be a whole number of seconds greater than 0"));
  }
  if (auto v = field(at, "unique_for")) {
    defaults.unique_for_s = number(*v, positive, kPositiveSeconds);
  }
  return defaults;
}

Retry parse_retry(const At& at) {
  expect_keys(at, {"base", "max", "jitter"});
  Retry retry;
  const auto base = field(at, "base");
  const auto max = field(at, "max");
  if (base) retry.base_s = number(*base, positive, kPositiveSeconds);
  if (max) retry.max_s = number(*max, positive, kPositiveSeconds);
  if (auto v = field(at, "jitter")) {
    retry.jitter = number(
        *v, [](double f) { return f >= 0 && f <= 1; }, "must be a fraction between 0 and 1");
  }
  if (retry.max_s < retry.base_s) {
    if (max) fail(*max, "must be at least retry.base (" + format_number(retry.base_s) + ")");
    fail(*base, "must be at most retry.max (" + format_number(retry.max_s) + ", the default)");
  }
  return retry;
}

Dispatch parse_dispatch(const At& at) {
  expect_keys(at, {"max_busy_pause", "connect_timeout", "reserve_ahead"});
  Dispatch dispatch;
  if (auto v = field(at, "max_busy_pause")) {
    dispatch.max_busy_pause_s = number(*v, positive, kPositiveSeconds);
  }
  if (auto v = field(at, "connect_timeout")) {
    dispatch.connect_timeout_s = number(*v, positive, kPositiveSeconds);
  }
  if (auto v = field(at, "reserve_ahead")) {
    dispatch.reserve_ahead_s =
        number(*v, up_to_a_second, "must be a number of seconds from 0 (off) to 1");
  }
  return dispatch;
}

Limits parse_limits(const At& at) {
  expect_keys(at, {"max_body_bytes", "max_result_bytes", "max_connections", "header_timeout",
                   "read_timeout", "idle_timeout"});
  Limits limits;
  if (auto v = field(at, "max_body_bytes")) {
    limits.max_body_bytes = static_cast<std::size_t>(
        integer(*v, kMinBodyBytes, kMaxBodyBytes,
                "must be a number of bytes between 1024 and 1073741824 (1 GiB)"));
  }
  if (auto v = field(at, "max_result_bytes")) {
    limits.max_result_bytes = static_cast<std::size_t>(
        integer(*v, kMinBodyBytes, kMaxBodyBytes,
                "must be a number of bytes between 1024 and 1073741824 (1 GiB)"));
  }
  if (auto v = field(at, "max_connections")) {
    limits.max_connections = static_cast<int>(
        integer(*v, 1, kMaxConnections, "must be an integer between 1 and 1000000"));
  }
  if (auto v = field(at, "header_timeout")) {
    limits.header_timeout_s = number(*v, positive, kPositiveSeconds);
  }
  if (auto v = field(at, "read_timeout")) {
    limits.read_timeout_s = number(*v, positive, kPositiveSeconds);
  }
  if (auto v = field(at, "idle_timeout")) {
    limits.idle_timeout_s = number(*v, positive, kPositiveSeconds);
  }
  return limits;
}

// Only the paths: whether the files hold a matching certificate and key is checked at start.
// Empty paths (as in the example config) mean plain HTTP.
TlsConfig parse_tls(const At& at) {
  expect_keys(at, {"cert", "key", "ca_file"});
  TlsConfig tls;
  if (auto v = field(at, "cert")) tls.cert = string(*v, "must be the path of a PEM certificate");
  if (auto v = field(at, "key")) tls.key = string(*v, "must be the path of a PEM private key");
  if (auto v = field(at, "ca_file")) tls.ca_file = string(*v, "must be the path of a PEM file");
  if (!tls.cert.empty() && tls.key.empty()) {
    throw ConfigError("tls.key", "must name the private key of tls.cert to serve HTTPS");
  }
  if (tls.cert.empty() && !tls.key.empty()) {
    throw ConfigError("tls.cert",
                      "must name the certificate that goes with tls.key to serve HTTPS (or leave "
                      "out both for plain HTTP)");
  }
  return tls;
}

Log parse_log(const At& at) {
  expect_keys(at, {"level", "format", "access"});
  Log log;
  if (auto v = field(at, "access")) log.access = boolean(*v);
  if (auto v = field(at, "level")) log.level = log_level_from(v->path, string(*v, kString));
  if (auto v = field(at, "format")) log.format = log_format_from(v->path, string(*v, kString));
  return log;
}

Metrics parse_metrics(const At& at) {
  expect_keys(at, {"max_job_names"});
  Metrics metrics;
  if (auto v = field(at, "max_job_names")) {
    metrics.max_job_names = static_cast<int>(
        integer(*v, 1, kMaxJobNameLabels,
                "must be an integer between 1 and 10000 (job names with their own label; "
                "later ones are counted as \"_other\")"));
  }
  return metrics;
}

void parse_top_scalars(const At& root, Config& config) {
  if (auto v = field(root, "listen")) {
    config.listen = listen_from(
        v->path, string(*v, "must be a string HOST:PORT (quote an IPv6 one: \"[::1]:8080\")"));
  }
  if (auto v = field(root, "io_threads")) {
    config.io_threads = static_cast<int>(
        integer(*v, 0, kMaxIoThreads, "must be an integer between 0 (one per core) and 256"));
  }
  if (auto v = field(root, "data_dir")) {
    config.data_dir = non_empty_string(*v, "must be a directory path");
  }
  if (auto v = field(root, "shards")) {
    config.shards = static_cast<int>(integer(*v, 1, kMaxShards,
                                             "must be an integer between 1 and 1024 (fixed when "
                                             "the data store is created)"));
  }
  if (auto v = field(root, "shard_run")) {
    config.shard_run = static_cast<int>(
        integer(*v, 1, 100'000, "must be an integer between 1 (round robin) and 100000"));
  }
  if (auto v = field(root, "shutdown_grace")) {
    config.shutdown_grace_s = number(
        *v, [](double s) { return s >= 0; }, "must be a number of seconds, 0 or more");
  }
}

Config parse_document(const At& root) {
  expect_keys(root, {"listen", "io_threads", "data_dir", "redis", "shards", "shard_run", "defaults",
                     "retry", "dispatch", "limits", "tls", "shutdown_grace", "log", "metrics",
                     "auth", "workers", "constraints", "schedules"});
  Config config;
  parse_top_scalars(root, config);
  if (auto v = field(root, "redis")) config.redis = parse_redis(*v);
  if (auto v = field(root, "defaults")) config.defaults = parse_defaults(*v);
  if (auto v = field(root, "retry")) config.retry = parse_retry(*v);
  if (auto v = field(root, "dispatch")) config.dispatch = parse_dispatch(*v);
  if (auto v = field(root, "limits")) config.limits = parse_limits(*v);
  if (auto v = field(root, "tls")) config.tls = parse_tls(*v);
  if (auto v = field(root, "log")) config.log = parse_log(*v);
  if (auto v = field(root, "metrics")) config.metrics = parse_metrics(*v);
  if (auto v = field(root, "auth")) config.auth = parse_auth(*v);
  if (auto v = field(root, "workers")) config.workers = parse_workers(*v);
  if (auto v = field(root, "constraints")) config.constraints = parse_constraints(*v);
  if (auto v = field(root, "schedules")) config.schedules = parse_schedules(*v);
  return config;
}

std::string syntax_problem(const YAML::Exception& e) {
  if (e.mark.is_null()) return "not valid YAML: " + e.msg;
  return "not valid YAML at line " + std::to_string(e.mark.line + 1) + ", column " +
         std::to_string(e.mark.column + 1) + ": " + e.msg;
}

}  // namespace

std::string non_empty_string(const At& at, std::string_view must) {
  std::string text = string(at, must);
  if (text.empty()) fail(at, must);
  return text;
}

namespace {

// Counts documents without building them.
struct IgnoreEvents : YAML::EventHandler {
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// The number of YAML documents in `text`, counting no further than `at_most`. (Not
// YAML::LoadAll: yaml-cpp 0.7 can find endless empty documents in some malformed text, and
// LoadAll then never returns; tests/fuzz/fuzz_config found one.)
int count_documents(const std::string& text, int at_most) {
  std::istringstream stream(text);
  YAML::Parser parser(stream);
  IgnoreEvents ignore;
  int documents = 0;
  while (documents < at_most && parser.HandleNextDocument(ignore)) ++documents;
  return documents;
}

}  // namespace

Config parse_yaml_from(std::string_view text, const std::string& source) {
  YAML::Node document;
  try {
    const std::string yaml(text);
    if (count_documents(yaml, 2) > 1) {
      throw ConfigError(source,
                        "holds more than one YAML document (separated by ---); put every setting "
                        "in one");
    }
    document = YAML::Load(yaml);
  } catch (const YAML::Exception& e) {
    throw ConfigError(source, syntax_problem(e));
  }
  const At root{document, ""};
  if (!root.node.IsNull() && !root.node.IsMap()) {
    throw ConfigError(source,
                      "must be a map of settings (key: value lines), got " + describe(root.node));
  }
  return parse_document(root);
}

}  // namespace detail

Config parse_yaml(const std::string& yaml_text) {
  return detail::parse_yaml_from(yaml_text, "");
}

}  // namespace jq::config
