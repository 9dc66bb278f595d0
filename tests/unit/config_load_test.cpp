// load(): defaults <- file <- JQ_* environment <- flags, with an injected getenv.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>

#include "src/config/config.hpp"
#include "tests/unit/config_test_support.hpp"

using namespace jq::config;
using jq::config::test::raised_by;

namespace {

// A file in the temp directory, removed when the test ends.
class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    static int counter = 0;
    path_ =
        std::filesystem::temp_directory_path() / ("jq_config_test_" + std::to_string(::getpid()) +
                                                  "_" + std::to_string(++counter) + ".yaml");
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

Getenv env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

const Getenv kNoEnv = env_of({});

}  // namespace

TEST_CASE("without a file, env or flags, load gives the defaults", "[unit]") {
  CHECK(load(Flags{}, kNoEnv) == Config{});
}

TEST_CASE("the file beats the defaults", "[unit]") {
  const TempFile file("listen: 127.0.0.2:7000\nlog: {level: warn}\nshards: 4\n");
  const Config config = load(Flags{.config_file = file.path()}, kNoEnv);
  CHECK(config.listen == ListenAddress{"127.0.0.2", 7000});
  CHECK(config.log.level == LogLevel::warn);
  CHECK(config.shards == 4);
}

TEST_CASE("the environment beats the file", "[unit]") {
  const TempFile file(
      "listen: 127.0.0.2:7000\nredis: {url: 'redis://a:1/0'}\nlog: {level: warn}\n");
  const Config config =
      load(Flags{.config_file = file.path()}, env_of({{"JQ_LISTEN", "127.0.0.3:7001"},
                                                      {"JQ_REDIS_URL", "unix:///tmp/r.sock"},
                                                      {"JQ_LOG_LEVEL", "debug"}}));
  CHECK(config.listen == ListenAddress{"127.0.0.3", 7001});
  CHECK(config.redis.url == "unix:///tmp/r.sock");
  CHECK(config.log.level == LogLevel::debug);
}

TEST_CASE("flags beat the environment", "[unit]") {
  const TempFile file("listen: 127.0.0.2:7000\n");
  const Flags flags{.config_file = file.path(),
                    .listen = "[::1]:7002",
                    .redis_url = "redis://b:2/1",
                    .log_level = "error"};
  const Config config = load(flags, env_of({{"JQ_LISTEN", "127.0.0.3:7001"},
                                            {"JQ_REDIS_URL", "unix:///tmp/r.sock"},
                                            {"JQ_LOG_LEVEL", "debug"}}));
  CHECK(config.listen == ListenAddress{"::1", 7002});
  CHECK(config.redis.url == "redis://b:2/1");
  CHECK(config.log.level == LogLevel::error);
}

TEST_CASE("an empty environment variable is ignored", "[unit]") {
  const TempFile file("log: {level: warn}\n");
  const Config config = load(Flags{.config_file = file.path()}, env_of({{"JQ_LOG_LEVEL", ""}}));
  CHECK(config.log.level == LogLevel::warn);
}

TEST_CASE("an empty --redis-url flag selects the embedded redis over the file's", "[unit]") {
  const TempFile file("redis: {url: 'redis://a:1/0'}\n");
  CHECK(load(Flags{.config_file = file.path(), .redis_url = ""}, kNoEnv).redis.url.empty());
}

TEST_CASE("a bad environment value names the variable", "[unit]") {
  const auto error = raised_by([] { load(Flags{}, env_of({{"JQ_LOG_LEVEL", "loud"}})); });
  CHECK(error.key == "JQ_LOG_LEVEL");
  CHECK(error.message ==
        "config: JQ_LOG_LEVEL: must be one of trace, debug, info, warn or error, got \"loud\"");
  CHECK(raised_by([] { load(Flags{}, env_of({{"JQ_LISTEN", "nope"}})); }).key == "JQ_LISTEN");
  CHECK(raised_by([] {
          load(Flags{}, env_of({{"JQ_REDIS_URL", "tcp://x"}}));
        }).key == "JQ_REDIS_URL");
}

TEST_CASE("a bad flag value names the flag", "[unit]") {
  CHECK(raised_by([] { load(Flags{.listen = "127.0.0.1"}, kNoEnv); }).key == "--listen");
  CHECK(raised_by([] { load(Flags{.redis_url = "localhost:6379"}, kNoEnv); }).key == "--redis-url");
  CHECK(raised_by([] { load(Flags{.log_level = "INFO"}, kNoEnv); }).key == "--log-level");
}

TEST_CASE("a flag makes a bad environment value irrelevant", "[unit]") {
  const Config config = load(Flags{.log_level = "info"}, env_of({{"JQ_LOG_LEVEL", "loud"}}));
  CHECK(config.log.level == LogLevel::info);
}

TEST_CASE("a missing config file is named with the OS error", "[unit]") {
  const std::string path = "/nonexistent/jqmaster.yaml";
  const auto error = raised_by([&] { load(Flags{.config_file = path}, kNoEnv); });
  CHECK(error.key == path);
  CHECK(error.message ==
        "config: /nonexistent/jqmaster.yaml: cannot open the config file: No such file or "
        "directory");
}

TEST_CASE("a directory given as the config file is refused", "[unit]") {
  const std::string dir = std::filesystem::temp_directory_path().string();
  CHECK(raised_by([&] { load(Flags{.config_file = dir}, kNoEnv); }).key == dir);
}

TEST_CASE("a YAML syntax error in the file names the file, line and column", "[unit]") {
  const TempFile file("listen: 127.0.0.1:8080\nretry: {base: 1\n");
  const auto error = raised_by([&] { load(Flags{.config_file = file.path()}, kNoEnv); });
  CHECK(error.key == file.path());
  CHECK(error.message.starts_with("config: " + file.path() + ": not valid YAML at line "));
}

TEST_CASE("a bad value in the file names its dotted key", "[unit]") {
  const TempFile file("retry:\n  base: 0\n");
  const auto error = raised_by([&] { load(Flags{.config_file = file.path()}, kNoEnv); });
  CHECK(error.key == "retry.base");
}

TEST_CASE("a non-loopback listen address needs tokens or allow_open", "[unit]") {
  const auto error = raised_by([] { load(Flags{.listen = "0.0.0.0:8080"}, kNoEnv); });
  CHECK(error.key == "listen");
  CHECK(error.message.find("auth.allow_open") != std::string::npos);

  const TempFile bare_auth("auth:\n");
  CHECK(raised_by([&] {
          load(Flags{.config_file = bare_auth.path(), .listen = "0.0.0.0:8080"}, kNoEnv);
        }).key == "listen");

  const TempFile open("auth: {allow_open: true}\n");
  CHECK(load(Flags{.config_file = open.path(), .listen = "0.0.0.0:8080"}, kNoEnv).listen.host ==
        "0.0.0.0");

  const TempFile tokens("auth: {tokens: [{token: 0123456789abcdef, role: admin}]}\n");
  CHECK(load(Flags{.config_file = tokens.path(), .listen = "[::]:8080"}, kNoEnv).listen.host ==
        "::");
}

TEST_CASE("an auth section needs tokens, or allow_open for an API open on purpose", "[unit]") {
  // Without either it would refuse every request, with no token that could pass.
  for (const char* yaml : {"auth:\n", "auth: {tokens: []}\n", "auth: {allow_open: false}\n"}) {
    INFO(yaml);
    const TempFile file(yaml);
    const auto error = raised_by([&] { load(Flags{.config_file = file.path()}, kNoEnv); });
    CHECK(error.key == "auth.tokens");
    CHECK(error.message.find("allow_open") != std::string::npos);
  }
  const TempFile open("auth: {allow_open: true}\n");
  CHECK_FALSE(load(Flags{.config_file = open.path()}, kNoEnv).auth.enforced());
  const TempFile both(
      "auth: {allow_open: true, tokens: [{token: 0123456789abcdef, role: push}]}\n");
  CHECK(load(Flags{.config_file = both.path()}, kNoEnv).auth.enforced());
  CHECK_FALSE(Config{}.auth.enforced());
}

TEST_CASE("the documented example config/jqmaster.yaml gives exactly the defaults", "[unit]") {
  const std::string path = std::string(JQ_SOURCE_DIR) + "/config/jqmaster.yaml";
  const Config config = load(Flags{.config_file = path}, kNoEnv);
  const Config defaults;
  CHECK(config.listen == defaults.listen);
  CHECK(config.io_threads == defaults.io_threads);
  CHECK(config.data_dir == defaults.data_dir);
  CHECK(config.redis == defaults.redis);
  CHECK(config.shards == defaults.shards);
  CHECK(config.shard_run == defaults.shard_run);
  CHECK(config.defaults == defaults.defaults);
  CHECK(config.retry == defaults.retry);
  CHECK(config.limits == defaults.limits);
  CHECK(config.tls == defaults.tls);
  CHECK(config.shutdown_grace_s == defaults.shutdown_grace_s);
  CHECK(config.log == defaults.log);
  CHECK(config.auth == defaults.auth);
  CHECK(config.workers == defaults.workers);
  CHECK(config == defaults);
}

TEST_CASE("docker-compose's config loads: all interfaces, the Redis service, auth on", "[unit]") {
  const std::string path = std::string(JQ_SOURCE_DIR) + "/docker/jqmaster.compose.yaml";
  const Config config = load(Flags{.config_file = path}, kNoEnv);
  CHECK(config.listen.host == "0.0.0.0");
  CHECK(config.redis.url == "redis://redis:6379/0");
  CHECK(config.auth.configured);
  CHECK(config.auth.tokens.size() == 3);
}

// The image's default: reachable through the container's published port, so a listen on all
// interfaces must load (a non-loopback listen without tokens is refused unless allowed).
TEST_CASE("the image's config loads: all interfaces, the embedded Redis in the volume, open",
          "[unit]") {
  const std::string path = std::string(JQ_SOURCE_DIR) + "/docker/jqmaster.image.yaml";
  const Config config = load(Flags{.config_file = path}, kNoEnv);
  CHECK(config.listen.host == "0.0.0.0");
  CHECK(config.redis.url.empty());
  CHECK(config.data_dir == "/var/lib/jqmaster/data");
  CHECK(config.auth.allow_open);
  CHECK_FALSE(config.auth.enforced());  // served open: every /v1 request was a 401 before
}

TEST_CASE("the cluster compose file's config loads: the cluster's seeds, replicas_ack 1",
          "[unit]") {
  const std::string path = std::string(JQ_SOURCE_DIR) + "/docker/jqmaster.cluster.yaml";
  const Config config = load(Flags{.config_file = path}, kNoEnv);
  CHECK(config.redis.url == "redis+cluster://redis-1:6379,redis-2:6379,redis-3:6379");
  CHECK(config.redis.replicas_ack == 1);
  CHECK(config.auth.configured);
}
