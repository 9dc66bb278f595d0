#include "src/app/ca_files.hpp"

#include <string>

#include "src/dispatch/tls_contexts.hpp"

namespace jq::app {

void check_ca_files(const config::Config& config) {
  auto check = [](const std::string& key, const std::string& path) {
    if (path.empty()) return;
    if (auto checked = dispatch::check_ca_file(path); !checked) {
      throw config::ConfigError(key, checked.error());
    }
  };
  check("tls.ca_file", config.tls.ca_file);
  for (std::size_t i = 0; i < config.workers.size(); ++i) {
    check("workers[" + std::to_string(i) + "].ca_file", config.workers[i].ca_file);
  }
}

}  // namespace jq::app
