// Wiring: config -> (embedded Redis) -> Redis client -> store -> routes -> HTTP server, then
// signals and an orderly shutdown.
#pragma once

#include "src/config/config.hpp"

namespace jq::app {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitBadConfig = 2;

// Runs the daemon until SIGINT/SIGTERM; returns the process exit code.
int run(const config::Config& config);

}  // namespace jq::app
