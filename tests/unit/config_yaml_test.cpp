#include <catch2/catch.hpp>

#include "api/field_values.hpp"
#include "src/config/config.hpp"
#include "tests/unit/api_test_msgpack.hpp"
#include "tests/unit/config_test_support.hpp"

using namespace jq::config;
using jq::config::test::yaml_error;

TEST_CASE("an empty file gives every default", "[unit]") {
  const Config config = parse_yaml("");
  CHECK(config == Config{});
  CHECK(to_string(config.listen) == "127.0.0.1:8080");
  CHECK(config.io_threads == 0);
  CHECK(config.data_dir == "./data");
  CHECK(config.redis.url.empty());
  CHECK(config.redis.server_path == "redis-server");
  CHECK(config.redis.replicas_ack == 0);
  CHECK(config.redis.replicas_ack_timeout_s == 1);
  CHECK(config.shards == 16);
  CHECK(config.defaults.max_retry == 3);
  CHECK(config.defaults.timeout_s == 30);
  CHECK(config.defaults.result_ttl_s == 3600);
  CHECK(config.defaults.unique_for_s == 86400);
  CHECK(config.defaults.unique_for() == std::chrono::milliseconds(86'400'000));
  CHECK(config.retry.base_s == 1.0);
  CHECK(config.retry.max_s == 300);
  CHECK(config.retry.jitter == 0.2);
  CHECK(config.limits.max_body_bytes == 1048576);
  CHECK(config.shutdown_grace_s == 10);
  CHECK(config.log.level == LogLevel::info);
  CHECK(config.log.format == LogFormat::text);
  CHECK_FALSE(config.auth.configured);
  CHECK(config.workers.empty());
}

TEST_CASE("a file of only comments gives every default", "[unit]") {
  CHECK(parse_yaml("# nothing here\n\n   # nor here\n") == Config{});
  CHECK(parse_yaml("---\n# a document marker and a comment\n") == Config{});
}

TEST_CASE("null sections keep their defaults", "[unit]") {
  const Config config = parse_yaml("redis:\ndefaults:\nretry:\nlimits:\nlog:\nworkers:\n");
  CHECK(config == Config{});
}

TEST_CASE("every key is read", "[unit]") {
  const Config config = parse_yaml(R"(
listen: 0.0.0.0:9090
io_threads: 4
data_dir: /var/lib/jq
redis:
  url: redis://10.0.0.1:6379/2
  server_path: /usr/local/bin/redis-server
  replicas_ack: 1
  replicas_ack_timeout: 0.25
shards: 64
shard_run: 1
defaults:
  max_retry: 0
  timeout: 2.5
  result_ttl: 60
  unique_for: 600
retry:
  base: 0.5
  max: 60
  jitter: 0
limits:
  max_body_bytes: 4096
  max_connections: 50
  read_timeout: 2.5
  idle_timeout: 5
  header_timeout: 1.5
tls:
  cert: /etc/jq/cert.pem
  key: /etc/jq/key.pem
  ca_file: /etc/jq/ca.pem
shutdown_grace: 0
log:
  level: debug
  format: json
  access: true
auth:
  tokens:
    - {token: "0123456789abcdef", role: admin}
  allow_open: true
workers:
  - url: http://10.0.0.5:9000/run
    names: [send_email]
    concurrency: 2
    headers: {X-Key: secret}
)");
  CHECK(config.listen == ListenAddress{"0.0.0.0", 9090});
  CHECK(config.io_threads == 4);
  CHECK(config.data_dir == "/var/lib/jq");
  CHECK(config.redis == Redis{"redis://10.0.0.1:6379/2", "/usr/local/bin/redis-server", 1, 0.25});
  CHECK(config.shards == 64);
  CHECK(config.shard_run == 1);
  CHECK(config.defaults == Defaults{0, 2.5, 60, 600});
  CHECK(config.retry == Retry{0.5, 60, 0});
  CHECK(config.limits == Limits{4096, 50, 2.5, 5, 1 << 20, 1.5});
  CHECK(config.tls == TlsConfig{"/etc/jq/cert.pem", "/etc/jq/key.pem", "/etc/jq/ca.pem"});
  CHECK(config.shutdown_grace_s == 0);
  CHECK(config.log == Log{LogLevel::debug, LogFormat::json, true});
  CHECK(config.auth == Auth{true, {Token{"0123456789abcdef", Role::admin}}, true});
  REQUIRE(config.workers.size() == 1);
  CHECK(config.workers[0] ==
        StaticWorker{"http://10.0.0.5:9000/run", {"send_email"}, 2, {{"X-Key", "secret"}}});
}

TEST_CASE("numbers may be written as integers, decimals or with an exponent", "[unit]") {
  CHECK(parse_yaml("defaults: {timeout: 1e2}").defaults.timeout_s == 100);
  CHECK(parse_yaml("retry: {base: 2, max: +2.0}").retry.max_s == 2);
  CHECK(parse_yaml("shutdown_grace: .5").shutdown_grace_s == 0.5);
}

TEST_CASE("defaults.timeout becomes milliseconds exactly as a pushed job's timeout does",
          "[unit]") {
  // ceil(2.007 * 1000) is 2008: a conversion of its own, apart from the API's, gives 1 ms more.
  for (const char* seconds : {"2.007", "4.001", "1.1", "0.0001", "30"}) {
    INFO(seconds);
    const std::string value = jq::api::test::Mp().f64(std::stod(seconds));
    const auto pushed = jq::api::read_seconds_field("timeout", value, 86400);
    REQUIRE(pushed);
    CHECK(parse_yaml(std::string("defaults: {timeout: ") + seconds + "}").defaults.timeout() ==
          *pushed);
  }
  CHECK(parse_yaml("defaults: {timeout: 2.007}").defaults.timeout() ==
        std::chrono::milliseconds(2007));
  CHECK(Defaults{}.timeout() == std::chrono::milliseconds(30'000));
}

TEST_CASE("defaults.unique_for becomes milliseconds exactly as a pushed unique_for does",
          "[unit]") {
  for (const char* seconds : {"2.007", "0.0001", "86400", "31536000"}) {
    INFO(seconds);
    const std::string value = jq::api::test::Mp().f64(std::stod(seconds));
    const auto pushed = jq::api::read_seconds_field("unique_for", value, 31536000);
    REQUIRE(pushed);
    CHECK(
        parse_yaml(std::string("defaults: {unique_for: ") + seconds + "}").defaults.unique_for() ==
        *pushed);
  }
  CHECK(yaml_error("defaults: {unique_for: 0}").message ==
        "config: defaults.unique_for: must be a number of seconds greater than 0 and at most "
        "31536000 (365 days), got 0");
}

TEST_CASE("redis.url accepts empty, redis:// and unix://", "[unit]") {
  CHECK(parse_yaml("redis: {url: ''}").redis.url.empty());
  CHECK(parse_yaml("redis: {url: 'unix:///run/redis.sock'}").redis.url == "unix:///run/redis.sock");
  CHECK(parse_yaml("redis: {url: 'redis+cluster://a:7000,b:7001'}").redis.url ==
        "redis+cluster://a:7000,b:7001");
  const auto bad = yaml_error("redis: {url: 'http://localhost:6379'}");
  CHECK(bad.key == "redis.url");
  CHECK(bad.message ==
        "config: redis.url: must be empty (start an embedded redis-server), redis://host:port/db, "
        "unix:///path/to/redis.sock or redis+cluster://host:port[,host:port...] (Redis Cluster "
        "seed nodes), got \"http://localhost:6379\"");
  CHECK(yaml_error("redis: {url: 'redis://'}").key == "redis.url");
}

TEST_CASE("a value out of range names its key", "[unit]") {
  struct Case {
    const char* yaml;
    const char* key;
  };
  const Case cases[] = {
      {"io_threads: -1", "io_threads"},
      {"io_threads: 257", "io_threads"},
      {"data_dir: ''", "data_dir"},
      {"redis: {server_path: ''}", "redis.server_path"},
      {"redis: {replicas_ack: -1}", "redis.replicas_ack"},
      {"redis: {replicas_ack: 17}", "redis.replicas_ack"},
      {"redis: {replicas_ack_timeout: 0}", "redis.replicas_ack_timeout"},
      {"redis: {replicas_ack_timeout: 5.5}", "redis.replicas_ack_timeout"},
      {"shards: 0", "shards"},
      {"shards: 1025", "shards"},
      {"shard_run: 0", "shard_run"},
      {"shard_run: 100001", "shard_run"},
      {"defaults: {max_retry: -1}", "defaults.max_retry"},
      {"defaults: {max_retry: 1001}", "defaults.max_retry"},
      {"defaults: {timeout: 0}", "defaults.timeout"},
      {"defaults: {timeout: 86400.5}", "defaults.timeout"},
      {"defaults: {result_ttl: 0}", "defaults.result_ttl"},
      {"defaults: {unique_for: 0}", "defaults.unique_for"},
      {"defaults: {unique_for: -1}", "defaults.unique_for"},
      {"defaults: {unique_for: 31536000.5}", "defaults.unique_for"},
      {"retry: {base: 0}", "retry.base"},
      {"retry: {base: 10, max: 5}", "retry.max"},
      {"retry: {base: 500}", "retry.base"},
      {"retry: {base: 1e15, max: 1e15}", "retry.base"},
      {"retry: {max: 31536001}", "retry.max"},
      {"dispatch: {max_busy_pause: 1e300}", "dispatch.max_busy_pause"},
      {"retry: {jitter: 1.5}", "retry.jitter"},
      {"retry: {jitter: -0.1}", "retry.jitter"},
      {"limits: {max_body_bytes: 1023}", "limits.max_body_bytes"},
      {"limits: {max_body_bytes: 1073741825}", "limits.max_body_bytes"},
      {"limits: {max_connections: 0}", "limits.max_connections"},
      {"limits: {read_timeout: 0}", "limits.read_timeout"},
      {"limits: {idle_timeout: -1}", "limits.idle_timeout"},
      {"limits: {header_timeout: 0}", "limits.header_timeout"},
      {"shutdown_grace: -1", "shutdown_grace"},
      {"log: {level: verbose}", "log.level"},
      {"log: {format: xml}", "log.format"},
      {"listen: 127.0.0.1:0", "listen"},
  };
  for (const Case& c : cases) {
    INFO(c.yaml);
    CHECK(yaml_error(c.yaml).key == c.key);
  }
}

TEST_CASE("a value of the wrong type names its key", "[unit]") {
  struct Case {
    const char* yaml;
    const char* key;
  };
  const Case cases[] = {
      {"io_threads: 1.5", "io_threads"},
      {"shards: '16'", "shards"},
      {"shards: [16]", "shards"},
      {"shards:", "shards"},
      {"defaults: {timeout: abc}", "defaults.timeout"},
      {"defaults: {timeout: .inf}", "defaults.timeout"},
      {"defaults: {timeout: .nan}", "defaults.timeout"},
      {"defaults: {unique_for: '60'}", "defaults.unique_for"},
      {"defaults: {unique_for: .inf}", "defaults.unique_for"},
      {"retry: {base: '1'}", "retry.base"},
      {"listen: [a]", "listen"},
      {"data_dir: {a: b}", "data_dir"},
      {"redis: 5", "redis"},
      {"retry: [1, 2]", "retry"},
      {"log: {level: [info]}", "log.level"},
      {"auth: {allow_open: yes please}", "auth.allow_open"},
      {"auth: {allow_open: 'true'}", "auth.allow_open"},
      {"workers: {url: x}", "workers"},
  };
  for (const Case& c : cases) {
    INFO(c.yaml);
    CHECK(yaml_error(c.yaml).key == c.key);
  }
}

TEST_CASE("error messages say what is wrong and what was given", "[unit]") {
  CHECK(yaml_error("retry: {base: abc}").message ==
        "config: retry.base: must be a number of seconds greater than 0 and at most 31536000 (365 "
        "days), got \"abc\"");
  CHECK(yaml_error("shards: 0").message ==
        "config: shards: must be an integer between 1 and 1024 (fixed when the data store is "
        "created), got 0");
  CHECK(yaml_error("shards: '16'").message.ends_with("got \"16\""));
  CHECK(yaml_error("shards:").message.ends_with("got nothing"));
  CHECK(yaml_error("retry: [1]").message.ends_with("got a list"));
  CHECK(yaml_error("retry: {base: 10, max: 5}").message ==
        "config: retry.max: must be at least retry.base (10), got 5");
  CHECK(yaml_error("log: {level: verbose}").message ==
        "config: log.level: must be one of trace, debug, info, warn or error, got \"verbose\"");
}

TEST_CASE("an unknown key at the top level is named", "[unit]") {
  const auto error = yaml_error("listen: 127.0.0.1:1\nlisten_port: 80\n");
  CHECK(error.key == "listen_port");
  CHECK(error.message.starts_with("config: listen_port: unknown key"));
  CHECK(error.message.find("the top level takes listen, io_threads") != std::string::npos);
}

TEST_CASE("an unknown key inside retry names retry.colour", "[unit]") {
  const auto error = yaml_error("retry:\n  base: 1\n  colour: red\n");
  CHECK(error.key == "retry.colour");
  CHECK(error.message == "config: retry.colour: unknown key; retry takes base, max, jitter");
}

TEST_CASE("an unknown key close to a known one suggests it", "[unit]") {
  const auto error = yaml_error("defaults: {max_retries: 5}");
  CHECK(error.key == "defaults.max_retries");
  CHECK(error.message.find("did you mean max_retry?") != std::string::npos);
}

TEST_CASE("unknown keys are named in every section", "[unit]") {
  CHECK(yaml_error("redis: {host: x}").key == "redis.host");
  CHECK(yaml_error("defaults: {priority: 1}").key == "defaults.priority");
  CHECK(yaml_error("limits: {max_jobs: 1}").key == "limits.max_jobs");
  CHECK(yaml_error("log: {file: x}").key == "log.file");
  CHECK(yaml_error("auth: {users: []}").key == "auth.users");
}

TEST_CASE("a key given twice is an error", "[unit]") {
  const auto error = yaml_error("shards: 4\nshards: 8\n");
  CHECK(error.key == "shards");
  CHECK(error.message == "config: shards: is given twice; keep one");
}

TEST_CASE("a YAML syntax error gives its line and column", "[unit]") {
  const auto error = yaml_error("listen: 127.0.0.1:8080\nworkers: [\n");
  CHECK(error.key.empty());
  CHECK(error.message.starts_with("config: not valid YAML at line "));
  CHECK(error.message.find("column") != std::string::npos);
}

TEST_CASE("a document that is not a map is refused", "[unit]") {
  CHECK(yaml_error("- listen").message ==
        "config: must be a map of settings (key: value lines), got a list");
  CHECK(yaml_error("just words").key.empty());
}

TEST_CASE("several YAML documents in one file are refused", "[unit]") {
  CHECK(yaml_error("shards: 1\n---\nshards: 2\n").message.find("more than one YAML document") !=
        std::string::npos);
}

// Found by tests/fuzz/fuzz_config: yaml-cpp 0.7's LoadAll never returned on this text (it found
// endless empty documents); the loader now answers with a ConfigError.
TEST_CASE("malformed YAML that once made the loader loop is refused", "[unit]") {
  const std::string text =
      ", as here): nshards, and listen mu.1:9000/\", nam\353s: [\"*\"], concurrency: 2}\n"
      "au\311\310\307\306\236\235\224def0123\", role: admin}\n";
  CHECK_THROWS_AS(jq::config::parse_yaml(text), jq::config::ConfigError);
}

TEST_CASE("limits.max_result_bytes is 1 MiB by default, 1024 B to 1 GiB", "[unit]") {
  CHECK(parse_yaml("").limits.max_result_bytes == 1048576);
  CHECK(parse_yaml("limits: {max_result_bytes: 4096}").limits.max_result_bytes == 4096);
  CHECK(yaml_error("limits: {max_result_bytes: 10}").key == "limits.max_result_bytes");
}

TEST_CASE("tls.ca_file is empty by default and must be a string", "[unit]") {
  CHECK(parse_yaml("").tls.ca_file.empty());
  CHECK(parse_yaml("tls: {ca_file: ''}").tls.ca_file.empty());
  CHECK(yaml_error("tls: {ca_file: [a]}").key == "tls.ca_file");
  CHECK(yaml_error("tls: {ca_files: a}").key == "tls.ca_files");
}

TEST_CASE("dispatch.max_busy_pause caps a worker's Retry-After, 300 s by default", "[unit]") {
  CHECK(parse_yaml("").dispatch.max_busy_pause_s == 300);
  CHECK(parse_yaml("dispatch: {max_busy_pause: 2.5}").dispatch.max_busy_pause_s == 2.5);
  CHECK(yaml_error("dispatch: {max_busy_pause: 0}").key == "dispatch.max_busy_pause");
  CHECK(yaml_error("dispatch: {max_pause: 1}").key == "dispatch.max_pause");
}

TEST_CASE("dispatch.connect_timeout bounds a new worker connection, 10 s by default", "[unit]") {
  CHECK(parse_yaml("").dispatch.connect_timeout_s == 10);
  CHECK(parse_yaml("dispatch: {connect_timeout: 0.5}").dispatch.connect_timeout_s == 0.5);
  CHECK(yaml_error("dispatch: {connect_timeout: 0}").key == "dispatch.connect_timeout");
  CHECK(yaml_error("dispatch: {connect_timeout: soon}").key == "dispatch.connect_timeout");
}

TEST_CASE("tls serves HTTPS only with both cert and key, and names the one missing", "[unit]") {
  CHECK_FALSE(parse_yaml("").tls.serves_https());
  CHECK_FALSE(parse_yaml("tls: {cert: '', key: '', ca_file: ''}").tls.serves_https());
  CHECK(parse_yaml("tls: {cert: c.pem, key: k.pem}").tls.serves_https());
  // ca_file alone is for https workers: the listener stays plain HTTP.
  CHECK_FALSE(parse_yaml("tls: {ca_file: ca.pem}").tls.serves_https());
  CHECK(yaml_error("tls: {cert: c.pem}").key == "tls.key");
  CHECK(yaml_error("tls: {key: k.pem}").key == "tls.cert");
  CHECK(yaml_error("tls: {cert: [a]}").key == "tls.cert");
  CHECK(yaml_error("tls: {certificate: c.pem}").key == "tls.certificate");
}

TEST_CASE("limits.header_timeout is 10 s by default and must be positive", "[unit]") {
  CHECK(parse_yaml("").limits.header_timeout_s == 10);
  CHECK(parse_yaml("limits: {header_timeout: 0.5}").limits.header_timeout_s == 0.5);
  CHECK(yaml_error("limits: {header_timeout: -1}").key == "limits.header_timeout");
}

TEST_CASE("dispatch.reserve_ahead is 0.05 s by default, 0 turns it off, at most 1 s", "[unit]") {
  CHECK(parse_yaml("").dispatch.reserve_ahead_s == 0.05);
  CHECK(parse_yaml("dispatch: {reserve_ahead: 0}").dispatch.reserve_ahead_s == 0);
  CHECK(parse_yaml("dispatch: {reserve_ahead: 0.2}").dispatch.reserve_ahead_s == 0.2);
  CHECK(yaml_error("dispatch: {reserve_ahead: 2}").key == "dispatch.reserve_ahead");
  CHECK(yaml_error("dispatch: {reserve_ahead: -0.1}").key == "dispatch.reserve_ahead");
}
