// The JobMatcher: which constraints a job falls under, and the key it counts in under each.
//
// It runs at every push, so the constraints are compiled once (pointer tokens with their array
// indexes parsed, one entry per distinct pointer) and a job is matched on its MessagePack bytes
// as they are: the argument is walked with MsgpackReader, token by token, without building any
// tree, and each distinct pointer at most once per job however many constraints use it (the
// first kMaxCachedPaths of them; the others are walked each time). A job that matches nothing
// costs no allocation.
//
// The rules (the contract's "Constraints"):
// - `match.name` is a glob on the job's name: `*` any run of bytes (empty too), `?` one byte.
// - A JSON Pointer token indexes a map by string key (other keys never match; the first of
//   repeated keys wins) and an array by decimal index ("0", "12"; not "01" or "-"). A path that
//   runs into anything else, or past the end, finds no value: the condition `equals`, `in` or
//   `exists: true` fails and `exists: false` holds.
// - `equals` and `in` compare values by meaning, not by encoding: numbers by value whatever their
//   width or type (int8 5, uint64 5 and float 5.0 are equal; NaN equals nothing), strings, bins
//   and exts by their bytes (a string never equals a bin), arrays element by element, maps as
//   sets of pairs whatever their order.
// - The key is the value at the constraint's `key` pointer as text: a string as itself, an
//   integral number as its digits (5.0 -> "5"), anything else as its compact JSON text (bin and
//   ext as {"$bin": ...}); no value (or nil) -> "null". The text is cut to kMaxConstraintKeyBytes
//   bytes at a UTF-8 boundary, so values that share their first 256 bytes share a key. A
//   constraint without `key` has the one key "".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/constraint.hpp"

namespace jq::api {

inline constexpr std::size_t kMaxConstraintKeyBytes = 256;
inline constexpr std::size_t kMaxCachedPaths = 16;

// A constraint a job matched and the key it counts in.
struct MatchedConstraint {
  std::string constraint;  // the constraint's name
  std::string key;         // see the file comment; "" when the constraint has no key

  bool operator==(const MatchedConstraint&) const = default;
};

class JobMatcher {
 public:
  JobMatcher() = default;
  explicit JobMatcher(const std::vector<Constraint>& constraints);

  // The constraints `name` and `argument` (one MessagePack value) match, in the order they were
  // given. Bytes that are not well-formed MessagePack match as far as they can be read.
  std::vector<MatchedConstraint> match(std::string_view name, std::string_view argument) const;

  std::size_t size() const { return compiled_.size(); }

 private:
  struct Token {
    std::string key;                     // for a map
    std::optional<std::uint32_t> index;  // for an array, when the token is one
  };
  using Path = std::vector<Token>;
  using PathId = std::size_t;  // into paths_: each distinct pointer once
  struct Condition {
    PathId path;
    ConditionKind kind;
    std::vector<std::string> values;
    bool exists;
  };
  struct Compiled {
    std::string name;
    std::string glob;
    std::vector<Condition> conditions;
    std::optional<PathId> key;
  };
  class Lookups;  // the values of the paths in one argument, each found at most once

  PathId path_id(const JsonPointer& pointer);
  static bool holds(const Condition& condition, Lookups& lookups);

  std::vector<Path> paths_;
  std::vector<Compiled> compiled_;
};

// The pieces, for tests and for the fuzzer.
bool glob_match(std::string_view glob, std::string_view name);
// The bytes of the value at `tokens` in `value`; nullopt when there is none.
std::optional<std::string_view> value_at(std::string_view value,
                                         const std::vector<std::string>& tokens);
bool msgpack_equal(std::string_view a, std::string_view b);
// The key text of a value (nullopt: no value), as the file comment says.
std::string constraint_key(std::optional<std::string_view> value);

}  // namespace jq::api
