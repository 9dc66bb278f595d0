// What masters tell each other through Redis pub/sub (the scripts publish; see lua/).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace jq::events {

enum class EventKind {
  pushed,       // "p <name> [<shard> <priority> <member>]": jobs of a name became ready
  result,       // "r <id>": a kept result was stored
  scheduled,    // "s <due_ms>": a retry is due then
  workers,      // "w": registrations changed
  paused,       // "q": a queue was paused or resumed
  constraints,  // "c <version>": constraint definitions changed (version: the new one)
  schedules,    // "t <shard> <name>": a schedule's record in that shard changed; "t": any may have
  busy,         // "b <worker id> <until_ms>": the endpoint answered busy, held back until then
};

// The best job that became ready in one queue (lua/lib/preamble_1_announce_ready.lua).
struct ReadyHead {
  int shard = 0;
  std::int64_t priority = 0;
  std::string member;
  bool operator==(const ReadyHead&) const = default;
};

struct Event {
  EventKind kind;
  // pushed: the name (empty: any name may have new jobs); constraints: version; schedules:
  // "<shard> <name>" (empty: any); busy: the worker's id
  std::string arg;
  std::optional<ReadyHead> head{};  // pushed: where; absent: any shard of the name
  std::int64_t until_ms = 0;        // busy: held back until then (ms since the epoch)
};

std::optional<Event> parse_event(std::string_view payload);
std::string format_event(const Event& event);

}  // namespace jq::events
