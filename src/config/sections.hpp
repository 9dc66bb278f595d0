// One parse function per config section, each over its YAML node and filling its own struct's
// defaults. Shared by yaml_parse.cpp (the scalar sections and the document) and yaml_lists.cpp
// (auth tokens and static workers).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "src/config/config.hpp"
#include "src/config/yaml_reader.hpp"

namespace jq::config::detail {

// Parses a whole YAML text. Document-level problems (syntax errors with their line and column,
// several documents, a top level that is not a map) use `source` as the error's key.
Config parse_yaml_from(std::string_view text, const std::string& source);

Auth parse_auth(const At& at);  // present, even when null: configured = true
std::vector<StaticWorker> parse_workers(const At& at);
std::vector<api::Constraint> parse_constraints(const At& at);  // yaml_constraints.cpp
std::vector<api::Schedule> parse_schedules(const At& at);      // yaml_schedules.cpp

// An entry the API's decoder refused: the error's field under the entry's key
// ("constraints[0].rate.period: must be ..."). yaml_constraints.cpp.
[[noreturn]] void fail_api(const At& at, const api::ApiError& error);

std::string non_empty_string(const At& at, std::string_view must);

}  // namespace jq::config::detail
