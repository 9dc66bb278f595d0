// jqmaster: flags -> config -> run -> exit code.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>

#include "src/app/app.hpp"
#include "src/app/ca_files.hpp"
#include "src/config/config.hpp"
#include "src/log/log.hpp"

int main(int argc, char** argv) {
  CLI::App cli{"jqmaster: a job-queue master that dispatches jobs to HTTP workers by priority"};
  jq::config::Flags flags;
  cli.add_option("--config", flags.config_file, "YAML configuration file");
  cli.add_option("--listen", flags.listen, "HOST:PORT to serve HTTP on (env JQ_LISTEN)");
  cli.add_option(
      "--redis-url", flags.redis_url,
      "redis://host:port/db or unix:///path; empty: embedded Redis (env JQ_REDIS_URL, when "
      "not empty)");
  cli.add_option("--log-level", flags.log_level,
                 "trace, debug, info, warn or error (env JQ_LOG_LEVEL)");
  cli.set_version_flag("--version", std::string("jqmaster ") + JQ_VERSION);
  bool routes = false;
  cli.add_flag("--routes", routes, "print every route served (METHOD PATTERN per line) and exit");
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = cli.exit(e);
    return code == 0 ? 0 : jq::app::kExitBadConfig;
  }
  if (routes) {
    for (const auto& [method, pattern] : jq::app::route_table()) {
      std::cout << method << " " << pattern << "\n";
    }
    return 0;
  }
  jq::config::Config config;
  try {
    config = jq::config::load(flags, [](const char* name) { return std::getenv(name); });
    jq::app::check_ca_files(config);
  } catch (const jq::config::ConfigError& e) {
    std::cerr << e.what() << "\n";
    return jq::app::kExitBadConfig;
  }
  jq::log::setup(config.log);
  return jq::app::run(config);
}
