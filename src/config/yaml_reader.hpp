// Reading a YAML tree with the dotted path of each value at hand, so that every error names the
// key the user wrote ("workers[1].url"). Scalars are typed strictly: numbers and booleans must be
// plain (a quoted "30" is a string), and nothing is converted silently.
#pragma once

#include <yaml-cpp/yaml.h>

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace jq::config::detail {

// One YAML value and the dotted path that names it in errors ("" for the document itself).
struct At {
  YAML::Node node;
  std::string path;
};

std::string join_path(const std::string& parent, std::string_view key);  // "a" + "b" = "a.b"

// The value as a message shows it: `30`, `"abc"`, `a list`, `a map`, `nothing`.
std::string describe(const YAML::Node& node);

// Throws ConfigError(at.path, "<problem>, got <describe(at.node)>").
[[noreturn]] void fail(const At& at, std::string_view problem);

// Throws unless `at` is a map (null counts as empty) whose keys are all in `known`, each once.
// An unknown key's error lists the known ones and suggests the closest.
void expect_keys(const At& at, std::initializer_list<std::string_view> known);

std::optional<At> field(const At& map, std::string_view key);  // nullopt when absent
At required(const At& map, std::string_view key, std::string_view hint);

// Null is an empty list or map; any other non-list (non-map) throws with `must`.
std::vector<At> items(const At& list, std::string_view must);
std::vector<std::pair<std::string, At>> entries(const At& map, std::string_view must);

// Each throws with `must` (e.g. "must be an integer between 1 and 1024") on a wrong type or
// a value out of range.
long long integer(const At& at, long long min, long long max, std::string_view must);
double number(const At& at, bool (*in_range)(double), std::string_view must);
bool boolean(const At& at);
std::string string(const At& at, std::string_view must);  // any scalar, quoted or plain

// The value as one MessagePack value, for sections that the API's own decoders check (a
// constraint is decoded by api::decode_constraint): plain scalars are typed as above (null,
// true/false, integers, finite numbers; anything else is a string), quoted ones are strings,
// lists arrays and maps maps. Throws when it nests deeper than 64 levels or, through aliases,
// grows beyond 1 MiB.
std::string to_msgpack(const At& at);

}  // namespace jq::config::detail
