// lua/claimScheduleName-1.lua, saveSchedule-1.lua, leaveSchedule-1.lua and removeSchedule-2.lua:
// where a schedule lives and the writes of its record (src/schedules/schedule_store.hpp says in
// which order they go).
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

// The record writes take the shard's schedules hash only.
struct ScheduleRecordKeys {
  std::string schedules;
};

struct ClaimScheduleName {
  static constexpr ScriptId id = ScriptId::claim_schedule_name;
  static constexpr std::array<std::string_view, 1> key_names = {"schedule_homes"};
  static constexpr std::array<std::string_view, 3> arg_names = {"name", "expected", "claim"};
  static constexpr std::size_t args_per_item = 0;

  struct Keys {
    std::string homes;
  };
  struct Args {
    std::string name;
    std::string expected;  // the claim read before; "" none
    std::string claim;     // "" removes it
  };
  struct Claimed {
    bool done = false;
    std::string current;  // !done: the claim there is ("" none)
  };

  // `home`: the name's home shard.
  static Keys keys(const redis::Keys& k, int home) { return {k.schedule_homes(home)}; }
  static ScriptCall call(Keys k, Args a) {
    return {
        id, {std::move(k.homes)}, {std::move(a.name), std::move(a.expected), std::move(a.claim)}};
  }
  static Decoded<Claimed> decode(const Reply& reply) {
    if (!reply.is_array() || reply.elements.size() != 2 || !reply.elements[0].is_integer() ||
        reply.elements[1].type != Reply::Type::string) {
      return unexpected(bad_reply(id, "not {status, claim}", reply));
    }
    const std::int64_t status = reply.elements[0].integer;
    if (status != 0 && status != 1) {
      return unexpected(bad_reply(id, "undocumented status " + std::to_string(status), reply));
    }
    return Claimed{status == 1, reply.elements[1].str};
  }
};

struct SaveSchedule {
  static constexpr ScriptId id = ScriptId::save_schedule;
  static constexpr std::array<std::string_view, 1> key_names = {"schedules"};
  static constexpr std::array<std::string_view, 11> arg_names = {
      "name",    "mode",    "token",   "version", "definition",  "anchor_ms",
      "next_ms", "carried", "channel", "shard",   "read_next_ms"};
  static constexpr std::size_t args_per_item = 0;

  enum class Mode { arrive, update };  // 'new' and 'update'
  using Keys = ScheduleRecordKeys;
  struct Args {
    std::string name;
    Mode mode = Mode::arrive;
    std::int64_t token = 0;
    std::int64_t version = 0;  // update: the version the change was made from
    std::string definition;    // api::encode_schedule
    std::int64_t anchor_ms = 0;
    std::int64_t next_ms = 0;  // 0: none
    std::string carried;       // arrive: MessagePack map of what it counted; "" none
    std::string channel;
    std::int64_t shard = 0;
    std::int64_t read_next_ms = 0;  // update: the next tick the change was made from
  };
  enum class Status : std::int64_t {
    saved = 1,
    already = 0,
    taken = -1,
    not_found = -2,
    changed = -3,
    overtaken = -4
  };
  static constexpr std::array statuses = {Status::saved,     Status::already, Status::taken,
                                          Status::not_found, Status::changed, Status::overtaken};

  static Keys keys(const redis::Keys& k, int shard) { return {k.schedules(shard)}; }
  static ScriptCall call(Keys k, Args a) {
    return {id,
            {std::move(k.schedules)},
            {std::move(a.name), a.mode == Mode::update ? "update" : "new", arg(a.token),
             arg(a.version), std::move(a.definition), arg(a.anchor_ms), arg(a.next_ms),
             std::move(a.carried), std::move(a.channel), arg(a.shard), arg(a.read_next_ms)}};
  }
  static Decoded<Written<Status>> decode(const Reply& reply) {
    return written_reply(id, statuses, reply);
  }
};

struct LeaveSchedule {
  static constexpr ScriptId id = ScriptId::leave_schedule;
  static constexpr std::array<std::string_view, 1> key_names = {"schedules"};
  static constexpr std::array<std::string_view, 13> arg_names = {
      "name",          "token",        "version",      "to_shard",     "to_token",
      "to_definition", "to_anchor",    "to_next_tick", "settle_at_ms", "channel",
      "shard",         "read_next_ms", "read_runs"};
  static constexpr std::size_t args_per_item = 0;

  using Keys = ScheduleRecordKeys;
  struct Args {
    std::string name;
    std::int64_t token = 0;
    std::int64_t version = 0;
    std::int64_t to_shard = 0;
    std::int64_t to_token = 0;
    std::string to_definition;
    std::int64_t to_anchor_ms = 0;
    std::int64_t to_next_ms = 0;
    std::int64_t settle_at_ms = 0;
    std::string channel;
    std::int64_t shard = 0;
    std::int64_t read_next_ms = 0;  // the next tick the change was made from
    std::int64_t read_runs = 0;     // and the runs it had counted then
  };
  enum class Status : std::int64_t { leaving = 1, not_found = -2, changed = -3 };
  static constexpr std::array statuses = {Status::leaving, Status::not_found, Status::changed};

  static Keys keys(const redis::Keys& k, int shard) { return {k.schedules(shard)}; }
  static ScriptCall call(Keys k, Args a) {
    return {
        id,
        {std::move(k.schedules)},
        {std::move(a.name), arg(a.token), arg(a.version), arg(a.to_shard), arg(a.to_token),
         std::move(a.to_definition), arg(a.to_anchor_ms), arg(a.to_next_ms), arg(a.settle_at_ms),
         std::move(a.channel), arg(a.shard), arg(a.read_next_ms), arg(a.read_runs)}};
  }
  static Decoded<Written<Status>> decode(const Reply& reply) {
    return written_reply(id, statuses, reply);
  }
};

struct RemoveSchedule {
  static constexpr ScriptId id = ScriptId::remove_schedule;
  static constexpr std::array<std::string_view, 2> key_names = {"schedules", "tombstones"};
  static constexpr std::array<std::string_view, 6> arg_names = {"name",    "token", "mode",
                                                                "channel", "shard", "now"};
  static constexpr std::size_t args_per_item = 0;

  enum class Mode { remove, fence };
  struct Keys {
    std::string schedules;
    std::string tombstones;
  };
  struct Args {
    std::string name;
    std::int64_t token = 0;
    Mode mode = Mode::remove;
    std::string channel;
    std::int64_t shard = 0;
    std::int64_t now_ms = 0;
  };
  // remove: removed (1) or not_found (-2); fence: live (1) or fenced (0).
  enum class Status : std::int64_t { done = 1, fenced = 0, not_found = -2 };
  static constexpr std::array statuses = {Status::done, Status::fenced, Status::not_found};

  static Keys keys(const redis::Keys& k, int shard) {
    return {k.schedules(shard), k.schedule_tombstones(shard)};
  }
  static ScriptCall call(Keys k, Args a) {
    return {id,
            {std::move(k.schedules), std::move(k.tombstones)},
            {std::move(a.name), arg(a.token), a.mode == Mode::fence ? "fence" : "remove",
             std::move(a.channel), arg(a.shard), arg(a.now_ms)}};
  }
  static Decoded<Status> decode(const Reply& reply) { return integer_status(id, statuses, reply); }
};

}  // namespace jq::redis::bindings
