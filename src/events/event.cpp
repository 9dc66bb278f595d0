#include "src/events/event.hpp"

#include <charconv>

namespace jq::events {
namespace {

// Splits off the text up to the next space (all of it when there is none).
std::string_view next_word(std::string_view& rest) {
  const auto space = rest.find(' ');
  std::string_view word = rest.substr(0, space);
  rest = space == std::string_view::npos ? std::string_view{} : rest.substr(space + 1);
  return word;
}

template <class Int>
bool parse_int(std::string_view text, Int& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size();
}

// "<name>" or "<name> <shard> <priority> <member>"; names have no spaces (api/ checks them).
// An announcement that does not parse still names its queue: listeners then look at every
// shard of it rather than miss the job.
std::optional<Event> parse_pushed(std::string_view rest) {
  Event event{EventKind::pushed, std::string(next_word(rest))};
  if (rest.empty()) return event;
  ReadyHead head;
  if (!parse_int(next_word(rest), head.shard) || !parse_int(next_word(rest), head.priority) ||
      rest.empty()) {
    return event;
  }
  head.member = std::string(rest);
  event.head = std::move(head);
  return event;
}

}  // namespace

// "b <worker id> <until_ms>"; anything else is no event.
std::optional<Event> parse_busy(std::string_view rest) {
  Event event{EventKind::busy, std::string(next_word(rest))};
  if (event.arg.empty() || !parse_int(next_word(rest), event.until_ms)) return std::nullopt;
  return event;
}

std::optional<Event> parse_event(std::string_view payload) {
  if (payload.empty()) return std::nullopt;
  const std::string_view rest = payload.size() > 2 ? payload.substr(2) : std::string_view{};
  switch (payload[0]) {
    case 'p':
      return parse_pushed(rest);
    case 'r':
      return Event{EventKind::result, std::string(rest)};
    case 's':
      return Event{EventKind::scheduled, std::string(rest)};
    case 'w':
      return Event{EventKind::workers, {}};
    case 'q':
      return Event{EventKind::paused, {}};
    case 'c':
      return Event{EventKind::constraints, std::string(rest)};
    case 't':
      return Event{EventKind::schedules, std::string(rest)};
    case 'b':
      return parse_busy(rest);
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
    case EventKind::constraints:
      tag = 'c';
      break;
    case EventKind::schedules:
      tag = 't';
      break;
    case EventKind::busy:
      tag = 'b';
      break;
  }
  std::string out(1, tag);
  if (!event.arg.empty()) out += " " + event.arg;
  if (event.kind == EventKind::busy) out += " " + std::to_string(event.until_ms);
  if (event.kind == EventKind::pushed && event.head) {
    out += " " + std::to_string(event.head->shard) + " " + std::to_string(event.head->priority) +
           " " + event.head->member;
  }
  return out;
}

}  // namespace jq::events
