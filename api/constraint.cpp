// Constraint bodies: one table of field rules (field_map.hpp) per map of the object (the
// constraint, its match, each argument condition, its rate), so that an error names the field
// by its whole path ("match.argument[1].path").
#include "api/constraint.hpp"

#include <array>

#include "api/body.hpp"
#include "api/field_map.hpp"
#include "api/field_values.hpp"
#include "api/msgpack_reader.hpp"

namespace jq::api {

namespace {

constexpr std::string_view kNil = "\xc0";

bool is_name_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == ':' || c == '-';
}

bool is_valid_glob(std::string_view glob) {
  if (glob.empty() || glob.size() > kMaxGlobBytes) return false;
  for (char c : glob) {
    if (!is_name_char(c) && c != '*' && c != '?') return false;
  }
  return true;
}

template <class T, class U>
Expected<void, ApiError> assign(T& target, Expected<U, ApiError> value) {
  if (!value) return unexpected(std::move(value.error()));
  target = std::move(*value);
  return {};
}

// A map nested in the object at `field` ("rate", "match.argument[0]"), decoded by `rules`; its
// fields are named "<field>.<key>".
template <class Target, std::size_t N>
Expected<void, ApiError> decode_nested(std::string_view value,
                                       const std::array<FieldRule<Target>, N>& rules,
                                       const std::string& field, std::string_view shape,
                                       Target& target) {
  if (MsgpackReader(value).peek() != MsgpackKind::map) {
    return unexpected(field_error(
        field, field + " must be a map " + std::string(shape) + ", got " + describe_value(value)));
  }
  const std::string prefix = field + ".";
  const FieldMapSpec spec{field, prefix, false};
  auto given = decode_field_map(value, rules, spec, target);
  if (!given) return unexpected(std::move(given.error()));
  return {};
}

Expected<std::string, ApiError> read_name(std::string_view value) {
  const auto name = read_string_field("name", value);
  if (!name) return unexpected(name.error());
  if (!is_valid_constraint_name(*name)) {
    return unexpected(field_error(
        "name", "name " + std::string(kConstraintNameRule) + ", got " + describe_value(value)));
  }
  return std::string(*name);
}

Expected<JsonPointer, ApiError> read_pointer(const std::string& field, std::string_view value) {
  const auto text = read_string_field(field, value);
  if (!text) return unexpected(text.error());
  auto pointer = parse_json_pointer(*text);
  if (!pointer) {
    return unexpected(field_error(
        field, field + " " + std::string(kPointerRule) + ", got " + describe_value(value)));
  }
  return std::move(*pointer);
}

// --- One argument condition: {path, equals | in | exists}.

struct ConditionDraft {
  std::string field;  // "match.argument[1]"
  ArgumentCondition condition;
  int kinds = 0;  // how many of equals, in, exists were given
};

Expected<void, ApiError> set_kind(ConditionDraft& d, ConditionKind kind, std::string_view key) {
  if (++d.kinds > 1) {
    const std::string field = d.field + "." + std::string(key);
    return unexpected(field_error(
        field,
        d.field + " must have exactly one of equals, in, exists; " + field + " is one too many"));
  }
  d.condition.kind = kind;
  return {};
}

Expected<void, ApiError> apply_path(ConditionDraft& d, std::string_view value) {
  return assign(d.condition.path, read_pointer(d.field + ".path", value));
}

Expected<void, ApiError> apply_equals(ConditionDraft& d, std::string_view value) {
  if (auto set = set_kind(d, ConditionKind::equals, "equals"); !set) return set;
  d.condition.values = {std::string(value)};
  return {};
}

Expected<void, ApiError> apply_in(ConditionDraft& d, std::string_view value) {
  if (auto set = set_kind(d, ConditionKind::in, "in"); !set) return set;
  const std::string field = d.field + ".in";
  MsgpackReader reader(value);
  const auto count = reader.read_array_header();
  if (!count || *count == 0 || *count > kMaxInValues) {
    return unexpected(field_error(
        field, field + " must be an array of 1 to " + std::to_string(kMaxInValues) +
                   " values, got " +
                   (count ? std::to_string(*count) + " values" : describe_value(value))));
  }
  for (std::uint32_t i = 0; i < *count; ++i) {
    d.condition.values.emplace_back(reader.skip().value_or(kNil));
  }
  return {};
}

Expected<void, ApiError> apply_exists(ConditionDraft& d, std::string_view value) {
  if (auto set = set_kind(d, ConditionKind::exists, "exists"); !set) return set;
  return assign(d.condition.exists, read_bool_field(d.field + ".exists", value));
}

constexpr std::array<FieldRule<ConditionDraft>, 4> kConditionRules{{
    {"path", true, apply_path},
    {"equals", false, apply_equals},
    {"in", false, apply_in},
    {"exists", false, apply_exists},
}};

Expected<ArgumentCondition, ApiError> read_condition(std::size_t index, std::string_view value) {
  ConditionDraft d{"match.argument[" + std::to_string(index) + "]", {}, 0};
  if (auto decoded =
          decode_nested(value, kConditionRules, d.field, "{path, equals | in | exists}", d);
      !decoded) {
    return unexpected(decoded.error());
  }
  if (d.kinds == 0) {
    return unexpected(field_error(d.field, d.field + " needs one of equals, in or exists"));
  }
  return std::move(d.condition);
}

// --- match: {name, argument}.

Expected<void, ApiError> apply_match_name(ConstraintMatch& m, std::string_view value) {
  const auto glob = read_string_field("match.name", value);
  if (!glob) return unexpected(glob.error());
  if (!is_valid_glob(*glob)) {
    return unexpected(field_error(
        "match.name",
        "match.name must be a pattern of 1-128 bytes of A-Z a-z 0-9 _ . : - with * (any run) "
        "and ? (one character); \"*\" matches every name; got " +
            describe_value(value)));
  }
  m.name_glob = std::string(*glob);
  return {};
}

Expected<void, ApiError> apply_match_argument(ConstraintMatch& m, std::string_view value) {
  MsgpackReader reader(value);
  const auto count = reader.read_array_header();
  if (!count || *count > kMaxConditions) {
    return unexpected(field_error("match.argument",
                                  "match.argument must be an array of at most " +
                                      std::to_string(kMaxConditions) + " conditions, got " +
                                      (count ? std::to_string(*count) : describe_value(value))));
  }
  for (std::uint32_t i = 0; i < *count; ++i) {
    auto condition = read_condition(i, reader.skip().value_or(kNil));
    if (!condition) return unexpected(std::move(condition.error()));
    m.argument.push_back(std::move(*condition));
  }
  return {};
}

constexpr std::array<FieldRule<ConstraintMatch>, 2> kMatchRules{{
    {"name", true, apply_match_name},
    {"argument", false, apply_match_argument},
}};

Expected<ConstraintMatch, ApiError> read_match(std::string_view value) {
  ConstraintMatch match;
  if (auto decoded = decode_nested(value, kMatchRules, "match", "{name, argument}", match);
      !decoded) {
    return unexpected(decoded.error());
  }
  return match;
}

// --- rate: {limit, period, burst}.

Expected<void, ApiError> apply_rate_limit(RateLimit& r, std::string_view value) {
  return assign(r.limit, read_int_field("rate.limit", value, 1, kMaxRateLimit));
}

Expected<void, ApiError> apply_rate_period(RateLimit& r, std::string_view value) {
  return assign(r.period, read_seconds_field("rate.period", value, kMaxRatePeriodSeconds));
}

Expected<void, ApiError> apply_rate_burst(RateLimit& r, std::string_view value) {
  return assign(r.burst, read_int_field("rate.burst", value, 0, kMaxRateBurst));
}

constexpr std::array<FieldRule<RateLimit>, 3> kRateRules{{
    {"limit", true, apply_rate_limit},
    {"period", true, apply_rate_period},
    {"burst", false, apply_rate_burst},
}};

// The optional fields: nil removes (PATCH) or leaves out (POST, PUT).
Expected<std::optional<RateLimit>, ApiError> read_rate(std::string_view value) {
  if (value == kNil) return std::optional<RateLimit>();
  RateLimit rate;
  if (auto decoded = decode_nested(value, kRateRules, "rate", "{limit, period, burst}", rate);
      !decoded) {
    return unexpected(decoded.error());
  }
  return std::optional<RateLimit>(rate);
}

Expected<std::optional<JsonPointer>, ApiError> read_key(std::string_view value) {
  if (value == kNil) return std::optional<JsonPointer>();
  auto pointer = read_pointer("key", value);
  if (!pointer) return unexpected(std::move(pointer.error()));
  return std::optional<JsonPointer>(std::move(*pointer));
}

Expected<std::optional<int>, ApiError> read_concurrency(std::string_view value) {
  if (value == kNil) return std::optional<int>();
  const auto n = read_int_field("concurrency", value, 1, kMaxConstraintConcurrency);
  if (!n) return unexpected(n.error());
  return std::optional<int>(static_cast<int>(*n));
}

// --- The whole object (POST, PUT).

struct Draft {
  std::optional<std::string> name;
  Constraint constraint;
};

constexpr std::array<FieldRule<Draft>, 6> kConstraintRules{{
    {"name", false, [](Draft& d, std::string_view v) { return assign(d.name, read_name(v)); }},
    {"match", true,
     [](Draft& d, std::string_view v) { return assign(d.constraint.match, read_match(v)); }},
    {"key", false,
     [](Draft& d, std::string_view v) { return assign(d.constraint.key, read_key(v)); }},
    {"concurrency", false,
     [](Draft& d, std::string_view v) {
       return assign(d.constraint.concurrency, read_concurrency(v));
     }},
    {"rate", false,
     [](Draft& d, std::string_view v) { return assign(d.constraint.rate, read_rate(v)); }},
    {"paused", false,
     [](Draft& d, std::string_view v) {
       return assign(d.constraint.paused, read_bool_field("paused", v));
     }},
}};

// --- PATCH: any field.

struct PatchDraft {
  std::optional<std::string> name;
  ConstraintPatch patch;
};

constexpr std::array<FieldRule<PatchDraft>, 6> kPatchRules{{
    {"name", false, [](PatchDraft& d, std::string_view v) { return assign(d.name, read_name(v)); }},
    {"match", false,
     [](PatchDraft& d, std::string_view v) { return assign(d.patch.match, read_match(v)); }},
    {"key", false,
     [](PatchDraft& d, std::string_view v) { return assign(d.patch.key, read_key(v)); }},
    {"concurrency", false,
     [](PatchDraft& d, std::string_view v) {
       return assign(d.patch.concurrency, read_concurrency(v));
     }},
    {"rate", false,
     [](PatchDraft& d, std::string_view v) { return assign(d.patch.rate, read_rate(v)); }},
    {"paused", false,
     [](PatchDraft& d, std::string_view v) {
       return assign(d.patch.paused, read_bool_field("paused", v));
     }},
}};

constexpr FieldMapSpec kConstraintSpec{"a constraint", "", false};

// The one name a new definition may not take (see is_valid_constraint_name).
Expected<void, ApiError> check_not_reserved(std::string_view name) {
  if (name != "ordering_key") return {};
  return unexpected(field_error(
      "name",
      "name must not be \"ordering_key\": it is what blocked_by shows for a job waiting "
      "in its ordering line; choose another name (a constraint stored with it by an "
      "earlier release can still be read and deleted)"));
}

// The whole object, its name required (any name of the name characters).
Expected<Constraint, ApiError> decode_with_name(std::string_view body, MediaType type) {
  auto draft = decode_body_map(body, type, kConstraintRules, kConstraintSpec);
  if (!draft) return unexpected(std::move(draft.error()));
  if (!draft->name) return unexpected(missing_field_error(kConstraintSpec, "name"));
  draft->constraint.name = std::move(*draft->name);
  return std::move(draft->constraint);
}

// A body's name, when given, must be the one in the URL: a PUT or PATCH cannot rename.
Expected<void, ApiError> check_url_name(const std::optional<std::string>& name,
                                        std::string_view url_name) {
  // A body without a name takes the URL's, which is then the one to check.
  if (!name && !is_valid_constraint_name(url_name)) {
    return unexpected(field_error("name", "name " + std::string(kConstraintNameRule) + ", got \"" +
                                              std::string(url_name) + "\""));
  }
  if (auto allowed = check_not_reserved(url_name); !allowed) return allowed;
  if (!name || *name == url_name) return {};
  return unexpected(
      field_error("name", "name must be the constraint's name in the URL (\"" +
                              std::string(url_name) + "\"), got \"" + *name +
                              "\"; to rename a constraint, create the new one and delete the old"));
}

nlohmann::json pointer_view(const std::optional<JsonPointer>& pointer) {
  return pointer ? nlohmann::json(pointer->text) : nlohmann::json(nullptr);
}

nlohmann::json condition_view(const ArgumentCondition& c) {
  nlohmann::json out = {{"path", c.path.text}};
  switch (c.kind) {
    case ConditionKind::equals:
      out["equals"] = raw_msgpack(c.values.empty() ? std::string(kNil) : c.values.front());
      break;
    case ConditionKind::in: {
      nlohmann::json values = nlohmann::json::array();
      for (const std::string& v : c.values) values.push_back(raw_msgpack(v));
      out["in"] = std::move(values);
      break;
    }
    case ConditionKind::exists:
      out["exists"] = c.exists;
      break;
  }
  return out;
}

// Whole seconds as an integer (60), anything else as a fraction (0.5).
nlohmann::json seconds_view(std::chrono::milliseconds ms) {
  if (ms.count() % 1000 == 0) return ms.count() / 1000;
  return static_cast<double>(ms.count()) / 1000.0;
}

nlohmann::json rate_view(const std::optional<RateLimit>& rate) {
  if (!rate) return nullptr;
  return {{"limit", rate->limit}, {"period", seconds_view(rate->period)}, {"burst", rate->burst}};
}

}  // namespace

bool is_valid_constraint_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxConstraintNameBytes) return false;
  for (char c : name) {
    if (!is_name_char(c)) return false;
  }
  return true;
}

Expected<Constraint, ApiError> decode_stored_constraint(std::string_view bytes) {
  return decode_with_name(bytes, MediaType::msgpack);
}

Expected<Constraint, ApiError> decode_constraint(std::string_view body, MediaType type) {
  auto c = decode_with_name(body, type);
  if (!c) return c;
  if (auto allowed = check_not_reserved(c->name); !allowed) return unexpected(allowed.error());
  return c;
}

Expected<Constraint, ApiError> decode_constraint_replace(std::string_view body, MediaType type,
                                                         std::string_view url_name) {
  auto draft = decode_body_map(body, type, kConstraintRules, kConstraintSpec);
  if (!draft) return unexpected(std::move(draft.error()));
  if (auto same = check_url_name(draft->name, url_name); !same) return unexpected(same.error());
  draft->constraint.name = std::string(url_name);
  return std::move(draft->constraint);
}

Expected<ConstraintPatch, ApiError> decode_constraint_patch(std::string_view body, MediaType type,
                                                            std::string_view url_name) {
  auto draft = decode_body_map(body, type, kPatchRules, kConstraintSpec);
  if (!draft) return unexpected(std::move(draft.error()));
  if (auto same = check_url_name(draft->name, url_name); !same) return unexpected(same.error());
  return std::move(draft->patch);
}

Constraint apply_patch(Constraint constraint, const ConstraintPatch& patch) {
  if (patch.match) constraint.match = *patch.match;
  if (patch.key) constraint.key = *patch.key;
  if (patch.concurrency) constraint.concurrency = *patch.concurrency;
  if (patch.rate) constraint.rate = *patch.rate;
  if (patch.paused) constraint.paused = *patch.paused;
  return constraint;
}

nlohmann::json constraint_view(const Constraint& constraint) {
  nlohmann::json conditions = nlohmann::json::array();
  for (const ArgumentCondition& c : constraint.match.argument) {
    conditions.push_back(condition_view(c));
  }
  return {{"name", constraint.name},
          {"match", {{"name", constraint.match.name_glob}, {"argument", std::move(conditions)}}},
          {"key", pointer_view(constraint.key)},
          {"concurrency", constraint.concurrency ? nlohmann::json(*constraint.concurrency)
                                                 : nlohmann::json(nullptr)},
          {"rate", rate_view(constraint.rate)},
          {"paused", constraint.paused}};
}

std::string encode_constraint(const Constraint& constraint) {
  return encode_body(constraint_view(constraint), MediaType::msgpack);
}

}  // namespace jq::api
