// Layering: defaults, then the file, then JQ_* environment variables, then flags. For each of the
// three settings that can be overridden, only the winning source is parsed, so a stale variable
// that a flag overrides cannot stop the start.
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "api/field_values.hpp"
#include "src/config/config.hpp"
#include "src/config/sections.hpp"
#include "src/config/values.hpp"

namespace jq::config {
namespace {

constexpr std::size_t kMaxFileBytes = 1 << 20;

// A setting that the environment and the command line can override.
struct Override {
  const char* env;
  const char* flag;
  std::optional<std::string> Flags::*flag_value;
  void (*apply)(Config& config, const std::string& key, const std::string& text);
};

const std::array<Override, 3> kOverrides{{
    {"JQ_LISTEN", "--listen", &Flags::listen,
     [](Config& c, const std::string& key, const std::string& text) {
       c.listen = detail::listen_from(key, text);
     }},
    {"JQ_REDIS_URL", "--redis-url", &Flags::redis_url,
     [](Config& c, const std::string& key, const std::string& text) {
       c.redis.url = detail::redis_url_from(key, text);
     }},
    {"JQ_LOG_LEVEL", "--log-level", &Flags::log_level,
     [](Config& c, const std::string& key, const std::string& text) {
       c.log.level = detail::log_level_from(key, text);
     }},
}};

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};

std::string os_error(std::string_view what) {
  return std::string(what) + ": " + std::strerror(errno);
}

std::string read_file(const std::string& path) {
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) throw ConfigError(path, os_error("cannot open the config file"));
  std::string text;
  std::array<char, 4096> buffer;
  while (const std::size_t n = std::fread(buffer.data(), 1, buffer.size(), file.get())) {
    text.append(buffer.data(), n);
    if (text.size() > kMaxFileBytes) {
      throw ConfigError(path, "is larger than 1 MiB; is it the right file?");
    }
  }
  if (std::ferror(file.get())) throw ConfigError(path, os_error("cannot read the config file"));
  return text;
}

void apply_overrides(Config& config, const Flags& flags, const Getenv& getenv) {
  for (const Override& o : kOverrides) {
    if (const auto& flag = flags.*o.flag_value) {
      o.apply(config, o.flag, *flag);
    } else if (const char* env = getenv(o.env); env != nullptr && *env != '\0') {
      o.apply(config, o.env, env);
    }
  }
}

// Anyone who can reach a non-loopback address could push jobs and register workers, so serving
// one without tokens must be asked for explicitly.
void check_exposure(const Config& config) {
  if (config.listen.is_loopback() || !config.auth.tokens.empty() || config.auth.allow_open) return;
  detail::fail_value("listen",
                     "is not a loopback address and auth has no tokens; add auth.tokens, or set "
                     "auth.allow_open: true to serve the API to anyone who can connect",
                     to_string(config.listen));
}

// An auth section without tokens would refuse every /v1 request, with no token that could pass:
// it serves only as the explicit choice of an open API (allow_open), else it is a mistake.
void check_tokens(const Auth& auth) {
  if (!auth.configured || !auth.tokens.empty() || auth.allow_open) return;
  throw ConfigError("auth.tokens",
                    "no tokens: every /v1 request would be refused; add tokens, or set "
                    "auth.allow_open: true to serve the API without them");
}

}  // namespace

bool Auth::enforced() const {
  return configured && !(tokens.empty() && allow_open);
}

std::chrono::milliseconds Defaults::timeout() const {
  return api::milliseconds_from_seconds(timeout_s);
}

std::chrono::milliseconds Defaults::unique_for() const {
  return api::milliseconds_from_seconds(unique_for_s);
}

ConfigError::ConfigError(std::string key, const std::string& problem)
    : std::runtime_error("config: " + (key.empty() ? std::string() : key + ": ") + problem),
      key_(std::move(key)) {}

Config load(const Flags& flags, const Getenv& getenv) {
  Config config;
  if (flags.config_file) {
    config = detail::parse_yaml_from(read_file(*flags.config_file), *flags.config_file);
  }
  apply_overrides(config, flags, getenv);
  check_exposure(config);
  check_tokens(config.auth);
  return config;
}

}  // namespace jq::config
