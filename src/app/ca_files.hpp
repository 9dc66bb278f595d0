// The PEM files the config names for https workers, read before the daemon starts: the config
// library only checks their paths (OpenSSL lives in the engine), and a CA file that cannot be
// loaded is a bad config, not an endpoint that fails later.
#pragma once

#include "src/config/config.hpp"

namespace jq::app {

// Throws config::ConfigError naming the key ("tls.ca_file", "workers[1].ca_file").
void check_ca_files(const config::Config& config);

}  // namespace jq::app
