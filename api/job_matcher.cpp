#include "api/job_matcher.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "api/body.hpp"
#include "api/msgpack_reader.hpp"

namespace jq::api {

namespace {

// The smallest double above every int64 (2^63) and above every uint64 (2^64).
constexpr double kTwo63 = 9223372036854775808.0;
constexpr double kTwo64 = 18446744073709551616.0;

bool same_int(const MsgpackInt& a, const MsgpackInt& b) {
  return a.above_int64 == b.above_int64 && a.value == b.value;
}

bool int_equals_double(const MsgpackInt& i, double d) {
  if (!std::isfinite(d) || d != std::floor(d)) return false;
  if (i.above_int64)
    return d >= kTwo63 && d < kTwo64 && static_cast<std::uint64_t>(d) == i.as_unsigned();
  return d >= -kTwo63 && d < kTwo63 && static_cast<std::int64_t>(d) == i.value;
}

struct Number {
  std::optional<MsgpackInt> integer;
  double floating = 0;
};

// The number at the reader's cursor (which moves past it); nullopt if it is not one.
std::optional<Number> read_number(MsgpackReader& r) {
  if (r.peek() == MsgpackKind::integer) {
    if (auto i = r.read_int()) return Number{*i, 0};
  } else if (r.peek() == MsgpackKind::floating) {
    if (auto d = r.read_float()) return Number{std::nullopt, *d};
  }
  return std::nullopt;
}

bool numbers_equal(const Number& a, const Number& b) {
  if (a.integer && b.integer) return same_int(*a.integer, *b.integer);
  if (a.integer) return int_equals_double(*a.integer, b.floating);
  if (b.integer) return int_equals_double(*b.integer, a.floating);
  return a.floating == b.floating;
}

bool equal_at(MsgpackReader& a, MsgpackReader& b, int depth);

// Both readers at an array header of the same count: every element equal in order.
bool arrays_equal(MsgpackReader& a, MsgpackReader& b, int depth) {
  const auto n = a.read_array_header();
  const auto m = b.read_array_header();
  if (!n || !m || *n != *m) return false;
  for (std::uint32_t i = 0; i < *n; ++i) {
    if (!equal_at(a, b, depth + 1)) return false;
  }
  return true;
}

// The value under `key` in the map `map` (its whole bytes), by meaning; nullopt when none.
std::optional<std::string_view> lookup(std::string_view map, std::string_view key, int depth) {
  MsgpackReader r(map);
  const auto pairs = r.read_map_header();
  for (std::uint32_t i = 0; pairs && i < *pairs; ++i) {
    const auto k = r.skip();
    const auto v = r.skip();
    if (!k || !v) return std::nullopt;
    MsgpackReader x(key), y(*k);
    if (equal_at(x, y, depth + 1)) return v;
  }
  return std::nullopt;
}

// Maps as sets of pairs: the same size, and every pair of each found in the other. Quadratic,
// which suits the small maps a constraint compares against.
bool maps_equal(MsgpackReader& a, MsgpackReader& b, int depth) {
  const auto whole_a = a.skip();
  const auto whole_b = b.skip();
  if (!whole_a || !whole_b) return false;
  const auto one_way = [depth](std::string_view from, std::string_view to) {
    MsgpackReader r(from);
    const auto pairs = r.read_map_header();
    for (std::uint32_t i = 0; pairs && i < *pairs; ++i) {
      const auto k = r.skip();
      const auto v = r.skip();
      if (!k || !v) return false;
      const auto other = lookup(to, *k, depth);
      if (!other) return false;
      MsgpackReader x(*v), y(*other);
      if (!equal_at(x, y, depth + 1)) return false;
    }
    return pairs.has_value();
  };
  MsgpackReader count_a(*whole_a), count_b(*whole_b);
  if (count_a.read_map_header() != count_b.read_map_header()) return false;
  return one_way(*whole_a, *whole_b) && one_way(*whole_b, *whole_a);
}

bool scalars_equal(MsgpackReader& a, MsgpackReader& b, MsgpackKind kind) {
  switch (kind) {
    case MsgpackKind::nil:
      return a.read_nil() && b.read_nil();
    case MsgpackKind::boolean: {
      const auto x = a.read_bool();
      const auto y = b.read_bool();
      return x && y && *x == *y;
    }
    case MsgpackKind::str: {
      const auto x = a.read_str();
      const auto y = b.read_str();
      return x && y && *x == *y;
    }
    case MsgpackKind::bin: {
      const auto x = a.read_bin();
      const auto y = b.read_bin();
      return x && y && *x == *y;
    }
    case MsgpackKind::ext: {
      const auto x = a.read_ext();
      const auto y = b.read_ext();
      return x && y && x->type == y->type && x->data == y->data;
    }
    default:
      return false;
  }
}

// Reads one value from each reader and compares them by meaning.
bool equal_at(MsgpackReader& a, MsgpackReader& b, int depth) {
  if (depth > MsgpackReader::kMaxDepth) return false;
  const MsgpackKind ka = a.peek();
  const MsgpackKind kb = b.peek();
  const auto numeric = [](MsgpackKind k) {
    return k == MsgpackKind::integer || k == MsgpackKind::floating;
  };
  if (numeric(ka) && numeric(kb)) {
    const auto x = read_number(a);
    const auto y = read_number(b);
    return x && y && numbers_equal(*x, *y);
  }
  if (ka != kb) return false;
  if (ka == MsgpackKind::array) return arrays_equal(a, b, depth);
  if (ka == MsgpackKind::map) return maps_equal(a, b, depth);
  return scalars_equal(a, b, ka);
}

// The reader at a map: the value of the first pair whose key is the string `key`.
std::optional<std::string_view> map_entry(MsgpackReader& r, std::string_view key) {
  const auto pairs = r.read_map_header();
  for (std::uint32_t i = 0; pairs && i < *pairs; ++i) {
    const bool is_str = r.peek() == MsgpackKind::str;
    const auto k = is_str ? r.read_str() : r.skip();
    const auto v = r.skip();
    if (!k || !v) return std::nullopt;
    if (is_str && *k == key) return v;
  }
  return std::nullopt;
}

std::optional<std::string_view> array_entry(MsgpackReader& r, std::optional<std::uint32_t> index) {
  if (!index) return std::nullopt;
  const auto count = r.read_array_header();
  if (!count || *index >= *count) return std::nullopt;
  for (std::uint32_t i = 0; i < *index; ++i) {
    if (!r.skip()) return std::nullopt;
  }
  return r.skip();
}

// Cuts at most `max` bytes without splitting a UTF-8 sequence.
std::string cut_utf8(std::string_view text, std::size_t max) {
  if (text.size() <= max) return std::string(text);
  std::size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) --cut;
  return std::string(text.substr(0, cut));
}

}  // namespace

bool glob_match(std::string_view glob, std::string_view name) {
  std::size_t g = 0, n = 0;
  std::size_t star = std::string_view::npos, resume = 0;  // the last '*' and where it took over
  while (n < name.size()) {
    if (g < glob.size() && glob[g] == '*') {
      star = g++;
      resume = n;
    } else if (g < glob.size() && (glob[g] == '?' || glob[g] == name[n])) {
      ++g;
      ++n;
    } else if (star != std::string_view::npos) {
      g = star + 1;  // let the last '*' take one more byte
      n = ++resume;
    } else {
      return false;
    }
  }
  while (g < glob.size() && glob[g] == '*') ++g;
  return g == glob.size();
}

bool msgpack_equal(std::string_view a, std::string_view b) {
  MsgpackReader x(a), y(b);
  return equal_at(x, y, 0);
}

std::string constraint_key(std::optional<std::string_view> value) {
  constexpr std::string_view kNull = "null";
  if (!value) return std::string(kNull);
  MsgpackReader r(*value);
  switch (r.peek()) {
    case MsgpackKind::str:
      return cut_utf8(r.read_str().value_or(kNull), kMaxConstraintKeyBytes);
    case MsgpackKind::integer: {
      const auto i = r.read_int().value_or(MsgpackInt{});
      return i.above_int64 ? std::to_string(i.as_unsigned()) : std::to_string(i.value);
    }
    case MsgpackKind::floating: {
      const double d = r.read_float().value_or(NAN);
      if (std::isfinite(d) && d == std::floor(d) && d >= -kTwo63 && d < kTwo63) {
        return std::to_string(static_cast<std::int64_t>(d));
      }
      break;
    }
    default:
      break;
  }
  const auto json = msgpack_to_json(*value);
  if (!json) return std::string(kNull);
  return cut_utf8(json->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                  kMaxConstraintKeyBytes);
}

namespace {

template <class Tokens>
std::optional<std::string_view> walk(std::string_view value, const Tokens& tokens) {
  std::string_view at = value;
  for (const auto& token : tokens) {
    MsgpackReader r(at);
    std::optional<std::string_view> next;
    if (r.peek() == MsgpackKind::map) {
      next = map_entry(r, token.key);
    } else if (r.peek() == MsgpackKind::array) {
      next = array_entry(r, token.index);
    }
    if (!next) return std::nullopt;
    at = *next;
  }
  return at;
}

struct LooseToken {
  std::string_view key;
  std::optional<std::uint32_t> index;
};

}  // namespace

std::optional<std::string_view> value_at(std::string_view value,
                                         const std::vector<std::string>& tokens) {
  std::vector<LooseToken> path;
  for (const std::string& t : tokens) path.push_back(LooseToken{t, pointer_array_index(t)});
  return walk(value, path);
}

// Each path's value in one argument, found on first use and kept for the other constraints
// (on the stack: no allocation per job).
class JobMatcher::Lookups {
 public:
  Lookups(const std::vector<Path>& paths, std::string_view argument)
      : paths_(paths), argument_(argument) {}

  std::optional<std::string_view> operator()(PathId id) {
    if (id >= kMaxCachedPaths) return walk(argument_, paths_[id]);
    if (!found_[id]) {
      values_[id] = walk(argument_, paths_[id]);
      found_[id] = true;
    }
    return values_[id];
  }

 private:
  const std::vector<Path>& paths_;
  std::string_view argument_;
  std::array<bool, kMaxCachedPaths> found_{};
  std::array<std::optional<std::string_view>, kMaxCachedPaths> values_;
};

JobMatcher::PathId JobMatcher::path_id(const JsonPointer& pointer) {
  Path path;
  path.reserve(pointer.tokens.size());
  for (const std::string& t : pointer.tokens) path.push_back(Token{t, pointer_array_index(t)});
  const auto same = [&](const Path& p) {
    return std::equal(p.begin(), p.end(), path.begin(), path.end(),
                      [](const Token& a, const Token& b) { return a.key == b.key; });
  };
  const auto found = std::find_if(paths_.begin(), paths_.end(), same);
  if (found != paths_.end()) return static_cast<PathId>(found - paths_.begin());
  paths_.push_back(std::move(path));
  return paths_.size() - 1;
}

JobMatcher::JobMatcher(const std::vector<Constraint>& constraints) {
  compiled_.reserve(constraints.size());
  for (const Constraint& c : constraints) {
    Compiled compiled{c.name, c.match.name_glob, {}, std::nullopt};
    for (const ArgumentCondition& a : c.match.argument) {
      compiled.conditions.push_back(Condition{path_id(a.path), a.kind, a.values, a.exists});
    }
    if (c.key) compiled.key = path_id(*c.key);
    compiled_.push_back(std::move(compiled));
  }
}

bool JobMatcher::holds(const Condition& condition, Lookups& lookups) {
  const auto value = lookups(condition.path);
  switch (condition.kind) {
    case ConditionKind::exists:
      return value.has_value() == condition.exists;
    case ConditionKind::equals:
    case ConditionKind::in:
      break;
  }
  if (!value) return false;
  for (const std::string& candidate : condition.values) {
    if (msgpack_equal(*value, candidate)) return true;
  }
  return false;
}

std::vector<MatchedConstraint> JobMatcher::match(std::string_view name,
                                                 std::string_view argument) const {
  std::vector<MatchedConstraint> matched;
  Lookups lookups(paths_, argument);
  for (const Compiled& c : compiled_) {
    if (c.glob != "*" && !glob_match(c.glob, name)) continue;
    const bool all =
        std::all_of(c.conditions.begin(), c.conditions.end(),
                    [&](const Condition& condition) { return holds(condition, lookups); });
    if (!all) continue;
    std::string key = c.key ? constraint_key(lookups(*c.key)) : std::string();
    matched.push_back(MatchedConstraint{c.name, std::move(key)});
  }
  return matched;
}

}  // namespace jq::api
