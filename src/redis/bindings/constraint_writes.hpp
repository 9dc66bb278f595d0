// lua/createConstraint-2.lua, lua/updateConstraint-3.lua and lua/removeConstraint-3.lua: the
// changes of a constraint's definition. Each answers {status, version}: the constraints version
// after the call (unchanged when nothing was written). A change or removal also makes the jobs
// the constraint holds due for a look (wakeConstraints), so it takes the state prefix too.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

// The constraints hash and its version counter: the two keys of every definition change.
struct ConstraintKeys {
  std::string constraints, version;
};

template <class Status>
using ConstraintWritten = Written<Status>;

inline ConstraintKeys constraint_keys(const redis::Keys& k) {
  return {k.constraints(), k.constraints_version()};
}

// And the state prefix, for the changes that let held jobs go.
struct ConstraintChangeKeys {
  std::string constraints, version, constraint_state;

  static ConstraintChangeKeys of(const redis::Keys& k) {
    return {k.constraints(), k.constraints_version(), k.constraint_state_prefix()};
  }
};

struct CreateConstraint {
  static constexpr ScriptId id = ScriptId::create_constraint;
  static constexpr std::array<std::string_view, 2> key_names = {"constraints", "version"};
  static constexpr std::array<std::string_view, 3> arg_names = {"name", "definition", "channel"};
  static constexpr std::size_t args_per_item = 0;

  using Keys = ConstraintKeys;
  struct Args {
    std::string name;
    std::string definition;  // MessagePack (api::encode_constraint)
    std::string channel;
  };
  enum class Status : std::int64_t { created = 1, exists = -1 };
  static constexpr std::array statuses = {Status::created, Status::exists};

  static Keys keys(const redis::Keys& k) { return constraint_keys(k); }
  static ScriptCall call(Keys k, Args a) {
    return {id,
            {std::move(k.constraints), std::move(k.version)},
            {std::move(a.name), std::move(a.definition), std::move(a.channel)}};
  }
  static Decoded<ConstraintWritten<Status>> decode(const Reply& reply) {
    return written_reply(id, statuses, reply);
  }
};

struct UpdateConstraint {
  static constexpr ScriptId id = ScriptId::update_constraint;
  static constexpr std::array<std::string_view, 3> key_names = {"constraints", "version",
                                                                "constraint_state"};
  static constexpr std::array<std::string_view, 5> arg_names = {"name", "definition", "expected",
                                                                "channel", "now_ms"};
  static constexpr std::size_t args_per_item = 0;

  using Keys = ConstraintChangeKeys;
  struct Args {
    std::string name;
    std::string definition;
    std::string expected;  // the definition read before the change; "": replace any
    std::string channel;
    std::int64_t now_ms = 0;
  };
  enum class Status : std::int64_t { replaced = 1, unchanged = 0, not_found = -1, changed = -2 };
  static constexpr std::array statuses = {Status::replaced, Status::unchanged, Status::not_found,
                                          Status::changed};

  static Keys keys(const redis::Keys& k) { return ConstraintChangeKeys::of(k); }
  static ScriptCall call(Keys k, Args a) {
    return {id,
            {std::move(k.constraints), std::move(k.version), std::move(k.constraint_state)},
            {std::move(a.name), std::move(a.definition), std::move(a.expected),
             std::move(a.channel), arg(a.now_ms)}};
  }
  static Decoded<ConstraintWritten<Status>> decode(const Reply& reply) {
    return written_reply(id, statuses, reply);
  }
};

struct RemoveConstraint {
  static constexpr ScriptId id = ScriptId::remove_constraint;
  static constexpr std::array<std::string_view, 3> key_names = {"constraints", "version",
                                                                "constraint_state"};
  static constexpr std::array<std::string_view, 3> arg_names = {"name", "channel", "now_ms"};
  static constexpr std::size_t args_per_item = 0;

  using Keys = ConstraintChangeKeys;
  struct Args {
    std::string name;
    std::string channel;
    std::int64_t now_ms = 0;
  };
  enum class Status : std::int64_t { removed = 1, not_found = -1 };
  static constexpr std::array statuses = {Status::removed, Status::not_found};

  static Keys keys(const redis::Keys& k) { return ConstraintChangeKeys::of(k); }
  static ScriptCall call(Keys k, Args a) {
    return {id,
            {std::move(k.constraints), std::move(k.version), std::move(k.constraint_state)},
            {std::move(a.name), std::move(a.channel), arg(a.now_ms)}};
  }
  static Decoded<ConstraintWritten<Status>> decode(const Reply& reply) {
    return written_reply(id, statuses, reply);
  }
};

}  // namespace jq::redis::bindings
