#include "src/events/event.hpp"

namespace jq::events {

std::optional<Event> parse_event(std::string_view payload) {
  if (payload.empty()) return std::nullopt;
  std::string arg(payload.size() > 2 ? payload.substr(2) : std::string_view{});
  switch (payload[0]) {
    case 'p':
      return Event{EventKind::pushed, std::move(arg)};
    case 'r':
      return Event{EventKind::result, std::move(arg)};
    case 's':
      return Event{EventKind::scheduled, std::move(arg)};
    case 'w':
      return Event{EventKind::workers, {}};
    case 'q':
      return Event{EventKind::paused, {}};
    default:
      return std::nullopt;
  }
}

std::string format_event(const Event& event) {
  char tag = 'p';
  switch (event.kind) {
    case EventKind::pushed:
      tag = 'p';
      break;
    case EventKind::result:
      tag = 'r';
      break;
    case EventKind::scheduled:
      tag = 's';
      break;
    case EventKind::workers:
      tag = 'w';
      break;
    case EventKind::paused:
      tag = 'q';
      break;
  }
  return event.arg.empty() ? std::string(1, tag) : std::string(1, tag) + " " + event.arg;
}

}  // namespace jq::events
