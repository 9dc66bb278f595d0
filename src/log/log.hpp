// Process-wide logging (spdlog's default logger): readable text, or one JSON object per line.
#pragma once

#include "src/config/config.hpp"

namespace jq::log {

void setup(const config::Log& options);

}  // namespace jq::log
