// Helpers shared by the config tests: run a parse and report the error it raised, if any.
#pragma once

#include <string>

#include "src/config/config.hpp"

namespace jq::config::test {

// The ConfigError raised by `parse`, or nothing when it succeeds.
struct Raised {
  std::string key = "(no error)";
  std::string message;
};

template <class Parse>
Raised raised_by(Parse&& parse) {
  try {
    parse();
  } catch (const ConfigError& e) {
    return Raised{e.key(), e.what()};
  }
  return {};
}

inline Raised yaml_error(const std::string& yaml) {
  return raised_by([&] { parse_yaml(yaml); });
}

}  // namespace jq::config::test
