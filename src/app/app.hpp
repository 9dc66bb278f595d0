// Wiring: config -> (embedded Redis) -> Redis client -> store -> routes -> HTTP server, then
// signals and an orderly shutdown.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "src/config/config.hpp"

namespace jq::app {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitBadConfig = 2;

// Runs the daemon until SIGINT/SIGTERM (SIGHUP reloads tls.cert and tls.key); returns the
// process exit code.
int run(const config::Config& config);

// Every route the daemon serves as (method, pattern), e.g. ("GET", "/v1/jobs/{id}"), from a
// Router built the way run() builds it, without connecting to anything (`jqmaster --routes`).
std::vector<std::pair<std::string, std::string>> route_table();

}  // namespace jq::app
