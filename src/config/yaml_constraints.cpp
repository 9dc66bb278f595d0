// The `constraints` section: each entry is the object of POST /v1/constraints, decoded by the
// API's own decoder (api::decode_constraint) from the entry turned into MessagePack, so the file
// cannot hold a constraint the API would refuse. An error names the key under the entry
// ("constraints[0].rate.period").
#include <algorithm>

#include "api/constraint.hpp"
#include "src/config/sections.hpp"

namespace jq::config::detail {
namespace {

api::Constraint parse_constraint(const At& at) {
  if (!at.node.IsMap()) {
    fail(at,
         "must be a map {name, match, key, concurrency, rate, paused} as in POST "
         "/v1/constraints");
  }
  auto constraint = api::decode_constraint(to_msgpack(at), api::MediaType::msgpack);
  if (!constraint) fail_api(at, constraint.error());
  return std::move(*constraint);
}

}  // namespace

// The API's message without its leading field name ("rate.period must be ..." -> "must be ..."),
// since ConfigError puts the whole key in front.
void fail_api(const At& at, const api::ApiError& error) {
  std::string problem = error.message;
  if (error.field && problem.starts_with(*error.field + " ")) {
    problem = problem.substr(error.field->size() + 1);
  }
  throw ConfigError(error.field ? join_path(at.path, *error.field) : at.path, std::move(problem));
}

std::vector<api::Constraint> parse_constraints(const At& at) {
  std::vector<api::Constraint> constraints;
  for (const At& item :
       items(at, "must be a list of constraints, each as in POST /v1/constraints")) {
    api::Constraint c = parse_constraint(item);
    const auto same = std::find_if(constraints.begin(), constraints.end(),
                                   [&](const api::Constraint& o) { return o.name == c.name; });
    if (same != constraints.end()) {
      throw ConfigError(join_path(item.path, "name"),
                        "repeats " + at.path + "[" + std::to_string(same - constraints.begin()) +
                            "].name; list each constraint once");
    }
    constraints.push_back(std::move(c));
  }
  return constraints;
}

}  // namespace jq::config::detail
