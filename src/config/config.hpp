// The daemon's configuration: one struct per section with its defaults, filled from the YAML
// file, then JQ_* environment variables, then command-line flags (each beats the one before).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "api/constraint.hpp"
#include "api/schedule.hpp"
#include "api/worker_registration.hpp"

namespace jq::config {

struct ListenAddress {
  std::string host = "127.0.0.1";  // IPv6 without brackets
  std::uint16_t port = 8080;
  bool is_loopback() const;  // 127.0.0.0/8, ::1 or "localhost"
  bool operator==(const ListenAddress&) const = default;
};

struct Redis {
  // empty: start an embedded redis-server; else redis://host:port/db | unix:///p |
  // redis+cluster://host:port[,host:port...]
  std::string url;
  std::string server_path = "redis-server";
  int replicas_ack = 0;               // 0-16: replicas that must confirm a push (WAIT) before 201
  double replicas_ack_timeout_s = 1;  // > 0, <= 60: how long the push waits for them
  bool operator==(const Redis&) const = default;
};

struct Defaults {
  int max_retry = 3;            // 0-1000
  double timeout_s = 30;        // > 0, <= 86400; jobs get it as timeout()
  int result_ttl_s = 3600;      // > 0
  double unique_for_s = 86400;  // > 0, <= 31536000: the longest a unique_key claim lasts
  // timeout_s in milliseconds, converted as the API converts a pushed job's `timeout`
  // (api::milliseconds_from_seconds), so the default and a pushed value agree to the ms.
  std::chrono::milliseconds timeout() const;
  // unique_for_s in milliseconds, converted as a pushed job's `unique_for` is.
  std::chrono::milliseconds unique_for() const;
  bool operator==(const Defaults&) const = default;
};

struct Retry {
  double base_s = 1.0;  // > 0
  double max_s = 300;   // >= base
  double jitter = 0.2;  // 0-1, +/- fraction
  bool operator==(const Retry&) const = default;
};

struct Dispatch {
  // The longest a worker's Retry-After (429/503) holds its endpoint back, > 0.
  double max_busy_pause_s = 300;
  // How long a new connection to a worker may take (TCP and TLS handshakes), > 0: beyond it the
  // endpoint is unreachable (the job goes back uncounted, the endpoint is held off).
  double connect_timeout_s = 10;
  // While all of an endpoint's slots are taken, jobs are reserved ahead for it: as many as it
  // answers in this long at its recent pace, 0-1 s; 0: none (a job is reserved only for a free
  // slot).
  double reserve_ahead_s = 0.05;
  bool operator==(const Dispatch&) const = default;
};

struct Limits {
  std::size_t max_body_bytes = 1 << 20;    // >= 1024, <= 1 GiB
  int max_connections = 10'000;            // open HTTP connections at once, 1-1000000
  double read_timeout_s = 30;              // to read one request once it began, > 0
  double idle_timeout_s = 60;              // a kept-alive connection may wait for its next request
  std::size_t max_result_bytes = 1 << 20;  // a worker's answer body, >= 1024, <= 1 GiB
  double header_timeout_s = 10;            // to read a request's header once it began, > 0
  bool operator==(const Limits&) const = default;
};

// PEM files. The listener serves HTTPS when `cert` is set (then `key` is required too); the files
// themselves are read and checked when the daemon starts (src/http/tls_identity.hpp).
struct TlsConfig {
  std::string cert;     // the listener's certificate, its chain after it
  std::string key;      // the certificate's private key, unencrypted
  std::string ca_file;  // extra CAs for https workers (empty: the system store)
  bool serves_https() const { return !cert.empty(); }
  bool operator==(const TlsConfig&) const = default;
};

enum class LogLevel { trace, debug, info, warn, error };
enum class LogFormat { text, json };

struct Log {
  LogLevel level = LogLevel::info;
  LogFormat format = LogFormat::text;
  bool access = false;  // one line per HTTP request
  bool operator==(const Log&) const = default;
};

struct Metrics {
  int max_job_names = 100;  // distinct job-name labels, 1-10000; later names count as "_other"
  bool operator==(const Metrics&) const = default;
};

enum class Role { push, worker, admin };

struct Token {
  std::string token;
  Role role = Role::push;
  bool operator==(const Token&) const = default;
};

struct Auth {
  bool configured = false;  // the `auth` section is present
  std::vector<Token> tokens;
  bool allow_open = false;  // serve without tokens, on a non-loopback address too
  // Whether /v1 requests need a token: a section with tokens; one with allow_open and no tokens
  // is the explicit choice of an open API (config::load refuses a section with neither).
  bool enforced() const;
  bool operator==(const Auth&) const = default;
};

// Checked by the rules of POST /v1/workers (api/worker_registration.hpp).
struct StaticWorker {
  std::string url;
  std::vector<std::string> names;  // job names, or exactly {"*"}
  int concurrency = api::kDefaultWorkerConcurrency;
  std::map<std::string, std::string> headers;
  std::string ca_file{};  // https only; empty: the system store and tls.ca_file
  std::string secret{};   // signs its dispatches; empty: unsigned
  bool operator==(const StaticWorker&) const = default;
};

struct Config {
  ListenAddress listen;
  int io_threads = 0;  // 0 = one per core, less one when Redis is local (app/io_threads)
  std::string data_dir = "./data";
  Redis redis;
  int shards = 16;       // 1-1024; fixed when the data store is created
  int shard_run = 1024;  // consecutive push requests stored in one shard, 1-100000
  Defaults defaults;
  Retry retry;
  Dispatch dispatch;
  Limits limits;
  TlsConfig tls;
  double shutdown_grace_s = 10;
  Log log;
  Metrics metrics;
  Auth auth;
  std::vector<StaticWorker> workers;
  // Created or replaced at start; checked by the rules of POST /v1/constraints.
  std::vector<api::Constraint> constraints;
  // Created or replaced at start; checked by the rules of POST /v1/schedules.
  std::vector<api::Schedule> schedules;
  bool operator==(const Config&) const = default;
};

// A bad key or value. `key` is the dotted path ("retry.base", "workers[1].url"); what() reads
// "config: retry.base: must be a number greater than 0, got \"abc\"".
class ConfigError : public std::runtime_error {
 public:
  ConfigError(std::string key, const std::string& problem);
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

// Values given on the command line; unset ones leave the lower layers alone.
struct Flags {
  std::optional<std::string> config_file{};
  std::optional<std::string> listen{};
  std::optional<std::string> redis_url{};
  std::optional<std::string> log_level{};
};

using Getenv = std::function<const char*(const char*)>;

// Parses one YAML document onto the defaults. Unknown keys and wrong values throw ConfigError.
Config parse_yaml(const std::string& yaml_text);

// Defaults <- file (flags.config_file, if any) <- JQ_LISTEN/JQ_REDIS_URL/JQ_LOG_LEVEL <- flags.
// Empty environment variables count as unset. Errors name the variable or flag a value came
// from ("JQ_LISTEN", "--listen"). A non-loopback listen address is refused unless auth has tokens
// or auth.allow_open is true. Throws ConfigError (a missing or unreadable file included).
Config load(const Flags& flags, const Getenv& getenv);

ListenAddress parse_listen(const std::string& text);  // "host:port", "[::1]:port"; ConfigError
LogLevel parse_log_level(const std::string& text);    // ConfigError on unknown level

std::string to_string(const ListenAddress& address);  // "127.0.0.1:8080", "[::1]:8080"
std::string_view to_string(LogLevel level);           // "trace" ... "error"
std::string_view to_string(LogFormat format);         // "text" | "json"
std::string_view to_string(Role role);                // "push" | "worker" | "admin"

}  // namespace jq::config
