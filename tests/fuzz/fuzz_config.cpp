// The YAML config file: loaded, or refused with a ConfigError that names the key. Any other
// exception escaping is a bug (the daemon would die without saying which key is wrong).
#include <cstddef>
#include <cstdint>
#include <string>

#include "src/config/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)jq::config::parse_yaml(text);
  } catch (const jq::config::ConfigError&) {
  }
  return 0;
}
