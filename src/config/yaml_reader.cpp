#include "src/config/yaml_reader.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <system_error>

#include <msgpack.hpp>

#include "src/config/config.hpp"
#include "src/config/values.hpp"

namespace jq::config::detail {
namespace {

// A quoted scalar carries the non-specific tag "!"; a plain one "?" (or an explicit tag).
bool is_plain(const YAML::Node& node) {
  return node.IsScalar() && node.Tag() != "!";
}

template <class T>
std::optional<T> parse_whole(std::string_view text) {
  if (text.starts_with('+')) {  // YAML allows a leading '+'; from_chars does not
    text.remove_prefix(1);
    if (text.starts_with('-')) return std::nullopt;
  }
  T value{};
  const char* end = text.data() + text.size();
  const auto [stop, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || stop != end) return std::nullopt;
  return value;
}

std::optional<double> to_double(std::string_view text) {
  const auto value = parse_whole<double>(text);
  if (!value || !std::isfinite(*value)) return std::nullopt;
  return value;
}

std::optional<bool> to_bool(std::string_view text) {
  constexpr std::array<std::string_view, 3> kTrue{"true", "True", "TRUE"};
  constexpr std::array<std::string_view, 3> kFalse{"false", "False", "FALSE"};
  if (std::find(kTrue.begin(), kTrue.end(), text) != kTrue.end()) return true;
  if (std::find(kFalse.begin(), kFalse.end(), text) != kFalse.end()) return false;
  return std::nullopt;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
    }
  }
  return row[b.size()];
}

std::string unknown_key_problem(std::string_view key, const std::string& parent,
                                std::initializer_list<std::string_view> known) {
  const std::size_t max_typos = std::max<std::size_t>(2, key.size() / 3);
  std::string problem = "unknown key";
  const auto closest = std::min_element(known.begin(), known.end(), [&](auto a, auto b) {
    return edit_distance(key, a) < edit_distance(key, b);
  });
  if (closest != known.end() && edit_distance(key, *closest) <= max_typos) {
    problem += " (did you mean " + std::string(*closest) + "?)";
  }
  problem += "; " + (parent.empty() ? std::string("the top level") : parent) + " takes ";
  for (auto it = known.begin(); it != known.end(); ++it) {
    problem += (it == known.begin() ? "" : ", ") + std::string(*it);
  }
  return problem;
}

std::string key_name(const At& map, const YAML::Node& key) {
  if (!key.IsScalar()) fail(At{key, map.path}, "keys must be plain names");
  return key.Scalar();
}

}  // namespace

std::string join_path(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}

std::string describe(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing";
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a map";
  const std::string& text = node.Scalar();
  if (is_plain(node) && (to_double(text) || to_bool(text))) return text;
  return quote(text);
}

void fail(const At& at, std::string_view problem) {
  throw ConfigError(at.path, std::string(problem) + ", got " + describe(at.node));
}

void expect_keys(const At& at, std::initializer_list<std::string_view> known) {
  for (const auto& [name, value] : entries(at, "must be a map")) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      throw ConfigError(value.path, unknown_key_problem(name, at.path, known));
    }
  }
}

std::optional<At> field(const At& map, std::string_view key) {
  if (!map.node.IsMap()) return std::nullopt;
  const YAML::Node value = map.node[std::string(key)];
  if (!value.IsDefined()) return std::nullopt;
  return At{value, join_path(map.path, key)};
}

At required(const At& map, std::string_view key, std::string_view hint) {
  if (auto value = field(map, key)) return *value;
  throw ConfigError(join_path(map.path, key), "is missing; " + std::string(hint));
}

std::vector<At> items(const At& list, std::string_view must) {
  if (list.node.IsNull()) return {};
  if (!list.node.IsSequence()) fail(list, must);
  std::vector<At> out;
  for (const YAML::Node& item : list.node) {
    out.push_back(At{item, list.path + "[" + std::to_string(out.size()) + "]"});
  }
  return out;
}

std::vector<std::pair<std::string, At>> entries(const At& map, std::string_view must) {
  if (map.node.IsNull()) return {};
  if (!map.node.IsMap()) fail(map, must);
  std::vector<std::pair<std::string, At>> out;
  for (const auto& entry : map.node) {
    std::string name = key_name(map, entry.first);
    At value{entry.second, join_path(map.path, name)};
    const bool seen = std::any_of(out.begin(), out.end(), [&](auto& e) { return e.first == name; });
    if (seen) throw ConfigError(value.path, "is given twice; keep one");
    out.emplace_back(std::move(name), std::move(value));
  }
  return out;
}

long long integer(const At& at, long long min, long long max, std::string_view must) {
  const auto value = is_plain(at.node) ? parse_whole<long long>(at.node.Scalar()) : std::nullopt;
  if (!value || *value < min || *value > max) fail(at, must);
  return *value;
}

double number(const At& at, bool (*in_range)(double), std::string_view must) {
  const auto value = is_plain(at.node) ? to_double(at.node.Scalar()) : std::nullopt;
  if (!value || !in_range(*value)) fail(at, must);
  return *value;
}

bool boolean(const At& at) {
  const auto value = is_plain(at.node) ? to_bool(at.node.Scalar()) : std::nullopt;
  if (!value) fail(at, "must be true or false");
  return *value;
}

std::string string(const At& at, std::string_view must) {
  if (!at.node.IsScalar()) fail(at, must);
  return at.node.Scalar();
}

namespace {

constexpr int kMaxMsgpackDepth = 64;
constexpr std::size_t kMaxMsgpackBytes = 1 << 20;

using Packer = msgpack::packer<msgpack::sbuffer>;

void pack_string(Packer& pk, const std::string& s) {
  pk.pack_str(static_cast<std::uint32_t>(s.size()));
  pk.pack_str_body(s.data(), static_cast<std::uint32_t>(s.size()));
}

// Floats always as float 64 (msgpack-cxx would write 3.0 as the integer 3).
void pack_float64(msgpack::sbuffer& out, double d) {
  const auto bits = std::bit_cast<std::uint64_t>(d);
  char bytes[9] = {static_cast<char>(0xcb)};
  for (int i = 0; i < 8; ++i) bytes[1 + i] = static_cast<char>(bits >> (56 - 8 * i));
  out.write(bytes, sizeof bytes);
}

void pack_scalar(Packer& pk, msgpack::sbuffer& out, const YAML::Node& node) {
  const std::string& text = node.Scalar();
  const bool plain = is_plain(node);
  if (const auto b = plain ? to_bool(text) : std::nullopt) {
    *b ? pk.pack_true() : pk.pack_false();
  } else if (const auto i = plain ? parse_whole<long long>(text) : std::nullopt) {
    pk.pack_int64(*i);
  } else if (const auto u = plain ? parse_whole<unsigned long long>(text) : std::nullopt) {
    pk.pack_uint64(*u);
  } else if (const auto d = plain ? to_double(text) : std::nullopt) {
    pack_float64(out, *d);
  } else {
    pack_string(pk, text);
  }
}

void pack_node(Packer& pk, msgpack::sbuffer& out, const At& at, int depth) {
  if (depth > kMaxMsgpackDepth) fail(at, "nests deeper than 64 levels");
  if (out.size() > kMaxMsgpackBytes) fail(at, "is larger than 1 MiB");
  const YAML::Node& node = at.node;
  if (!node.IsDefined() || node.IsNull()) {
    pk.pack_nil();
  } else if (node.IsScalar()) {
    pack_scalar(pk, out, node);
  } else if (node.IsSequence()) {
    const std::vector<At> list = items(at, "must be a list");
    pk.pack_array(static_cast<std::uint32_t>(list.size()));
    for (const At& item : list) pack_node(pk, out, item, depth + 1);
  } else {
    const auto map = entries(at, "must be a map");
    pk.pack_map(static_cast<std::uint32_t>(map.size()));
    for (const auto& [name, value] : map) {
      pack_string(pk, name);
      pack_node(pk, out, value, depth + 1);
    }
  }
}

}  // namespace

std::string to_msgpack(const At& at) {
  msgpack::sbuffer out;
  Packer pk(out);
  pack_node(pk, out, at, 1);
  return std::string(out.data(), out.size());
}

}  // namespace jq::config::detail
