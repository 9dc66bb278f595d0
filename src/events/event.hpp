// What masters tell each other through Redis pub/sub (the scripts publish; see lua/).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace jq::events {

enum class EventKind {
  pushed,     // "p <name>": jobs of a name became ready
  result,     // "r <id>": a kept result was stored
  scheduled,  // "s <due_ms>": a retry is due then
  workers,    // "w": registrations changed
  paused,     // "q": a queue was paused or resumed
};

struct Event {
  EventKind kind;
  std::string arg;
};

std::optional<Event> parse_event(std::string_view payload);
std::string format_event(const Event& event);

}  // namespace jq::events
