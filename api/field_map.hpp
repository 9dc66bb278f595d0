// Decoding a MessagePack map of named fields against a table of rules, one rule per field.
//
// The map's keys must be strings (else bad_request). Each key is looked up in the table; its
// rule receives the value's exact bytes. A key that appears twice is rejected, so a body cannot
// say two things at once; a key with no rule is rejected unless the spec allows extras. The
// decoder answers which fields the map held, for rules between fields (decode_job's "delay and
// run_at are not given together").
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "api/error.hpp"
#include "api/media_type.hpp"
#include "api/msgpack_reader.hpp"
#include "api/request_body.hpp"
#include "common/expected.hpp"

namespace jq::api {

template <class Target>
struct FieldRule {
  std::string_view name;
  bool required;
  Expected<void, ApiError> (*apply)(Target& target, std::string_view value);
};

struct FieldMapSpec {
  std::string_view what;          // the map in messages: "a job", "the result body"
  std::string_view field_prefix;  // prepended to field names in messages: "result."
  bool allow_unknown = false;     // keys without a rule are ignored instead of rejected
};

// Errors shared by every field map (field_map.cpp).
ApiError not_a_map_error(const FieldMapSpec& spec, std::string_view value);
ApiError key_not_string_error(std::string_view key);
ApiError unknown_field_error(const FieldMapSpec& spec, std::string_view key,
                             std::string_view key_msgpack, std::string_view allowed);
ApiError duplicate_field_error(const FieldMapSpec& spec, std::string_view key);
ApiError missing_field_error(const FieldMapSpec& spec, std::string_view key);
ApiError malformed_error(const MsgpackReader& reader);

template <class Target, std::size_t N>
std::string field_names(const std::array<FieldRule<Target>, N>& rules) {
  std::string names;
  for (const auto& rule : rules) names += (names.empty() ? "" : ", ") + std::string(rule.name);
  return names;
}

// Returns the rule's position in the table, or N when there is none.
template <class Target, std::size_t N>
constexpr std::size_t find_rule(const std::array<FieldRule<Target>, N>& rules,
                                std::string_view key) {
  std::size_t i = 0;
  while (i < N && rules[i].name != key) ++i;
  return i;
}

// The fields a map held: bit r stands for rules[r].
using FieldsGiven = std::uint64_t;

// The bit of the rule named `key` (a name the table has; else none): a constant where the
// table is one, so a check between fields costs no name lookup per request.
template <class Target, std::size_t N>
constexpr FieldsGiven field_bit(const std::array<FieldRule<Target>, N>& rules,
                                std::string_view key) {
  const std::size_t r = find_rule(rules, key);
  return r < N ? FieldsGiven{1} << r : 0;
}

// Whether the map held the field of the rule named `key` (a name the table has).
template <class Target, std::size_t N>
bool was_given(FieldsGiven given, const std::array<FieldRule<Target>, N>& rules,
               std::string_view key) {
  return (given & field_bit(rules, key)) != 0;
}

template <class Target, std::size_t N>
Expected<FieldsGiven, ApiError> decode_field_map(std::string_view map_value,
                                                 const std::array<FieldRule<Target>, N>& rules,
                                                 const FieldMapSpec& spec, Target& target) {
  static_assert(N <= 64, "the seen-set is one 64-bit mask");
  MsgpackReader reader(map_value);
  const auto pairs = reader.read_map_header();
  if (!pairs) return unexpected(not_a_map_error(spec, map_value));
  FieldsGiven seen = 0;
  for (std::uint32_t i = 0; i < *pairs; ++i) {
    const auto key_bytes = reader.skip();
    const auto value = reader.skip();
    if (!key_bytes || !value) return unexpected(malformed_error(reader));
    const auto key = MsgpackReader(*key_bytes).read_str();
    if (!key) return unexpected(key_not_string_error(*key_bytes));
    const std::size_t r = find_rule(rules, *key);
    if (r == N && spec.allow_unknown) continue;
    if (r == N) return unexpected(unknown_field_error(spec, *key, *key_bytes, field_names(rules)));
    if (seen & (FieldsGiven{1} << r)) return unexpected(duplicate_field_error(spec, *key));
    seen |= FieldsGiven{1} << r;
    if (auto applied = rules[r].apply(target, *value); !applied) {
      return unexpected(applied.error());
    }
  }
  for (std::size_t r = 0; r < N; ++r) {
    if (rules[r].required && !(seen & (FieldsGiven{1} << r))) {
      return unexpected(missing_field_error(spec, rules[r].name));
    }
  }
  return seen;
}

// A request body (MessagePack or JSON) that is one map of `rules`, decoded into a fresh Target.
template <class Target, std::size_t N>
Expected<Target, ApiError> decode_body_map(std::string_view body, MediaType type,
                                           const std::array<FieldRule<Target>, N>& rules,
                                           const FieldMapSpec& spec) {
  const auto bytes = request_msgpack(body, type);
  if (!bytes) return unexpected(bytes.error());
  Target draft;
  if (auto decoded = decode_field_map(*bytes, rules, spec, draft); !decoded) {
    return unexpected(decoded.error());
  }
  return draft;
}

}  // namespace jq::api
