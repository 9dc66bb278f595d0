#include "api/job_browse.hpp"

#include <array>
#include <charconv>

#include "api/job.hpp"
#include "api/query.hpp"

namespace jq::api {
namespace {

constexpr std::array<std::string_view, 4> kStates = {"queued", "scheduled", "running", "dead"};
constexpr std::string_view kStateLetters = "qsrd";
// A field (9) or a ready member (stamp 9 + field 9), base62.
constexpr std::size_t kFieldBytes = 9;

ApiError invalid(std::string field, std::string message) {
  auto e = ApiError::make(ErrorCode::bad_request, std::move(message));
  e.field = std::move(field);
  return e;
}

template <class T>
bool whole_number(std::string_view text, T& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return !text.empty() && ec == std::errc{} && end == text.data() + text.size();
}

bool base62(std::string_view text) {
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))) {
      return false;
    }
  }
  return true;
}

std::optional<BrowseCursor> read_cursor(std::string_view text) {
  // <letter>.<score>.<shard>.<member>
  if (text.size() < 2 || text[1] != '.') return std::nullopt;
  const auto letter = kStateLetters.find(text[0]);
  if (letter == std::string_view::npos) return std::nullopt;
  BrowseCursor c;
  c.state = static_cast<BrowseState>(letter);
  text.remove_prefix(2);
  const auto dot1 = text.find('.');
  if (dot1 == std::string_view::npos || !whole_number(text.substr(0, dot1), c.score)) {
    return std::nullopt;
  }
  text.remove_prefix(dot1 + 1);
  const auto dot2 = text.find('.');
  if (dot2 == std::string_view::npos || !whole_number(text.substr(0, dot2), c.shard) ||
      c.shard < 0) {
    return std::nullopt;
  }
  c.member = std::string(text.substr(dot2 + 1));
  const std::size_t want = c.state == BrowseState::queued ? 2 * kFieldBytes : kFieldBytes;
  if (c.member.size() != want || !base62(c.member)) return std::nullopt;
  return c;
}

}  // namespace

std::string_view to_string(BrowseState state) {
  return kStates[static_cast<std::size_t>(state)];
}

std::string format_cursor(const BrowseCursor& c) {
  return std::string(1, kStateLetters[static_cast<std::size_t>(c.state)]) + "." +
         std::to_string(c.score) + "." + std::to_string(c.shard) + "." + c.member;
}

Expected<JobBrowse, ApiError> parse_job_browse(std::string_view query) {
  JobBrowse out;
  auto state = query_value(query, "state");
  if (!state) return unexpected(std::move(state.error()));
  if (*state) {
    const std::string& text = **state;
    std::size_t i = 0;
    while (i < kStates.size() && kStates[i] != text) ++i;
    if (i == kStates.size()) {
      return unexpected(invalid(
          "state", "state must be queued, scheduled, running or dead, got \"" + text + "\""));
    }
    out.state = static_cast<BrowseState>(i);
  }
  auto name = query_value(query, "name");
  if (!name) return unexpected(std::move(name.error()));
  if (*name) {
    if (!is_valid_job_name(**name)) {
      return unexpected(invalid(
          "name", "name must be " + std::string(kJobNameRule) + ", got \"" + **name + "\""));
    }
    out.name = std::move(**name);
  }
  auto limit = query_number(query, {.name = "limit",
                                    .min = 1,
                                    .max = kMaxBrowseLimit,
                                    .fallback = kDefaultBrowseLimit,
                                    .integer = true,
                                    .unit = ""});
  if (!limit) return unexpected(std::move(limit.error()));
  out.limit = static_cast<int>(*limit);
  auto text = query_value(query, "cursor");
  if (!text) return unexpected(std::move(text.error()));
  if (*text) {
    auto cursor = read_cursor(**text);
    if (!cursor) {
      return unexpected(invalid("cursor",
                                "cursor is not one this master gave out: pass the next_cursor of "
                                "the previous page as it is, or leave it out for the first page"));
    }
    if (cursor->state != out.state) {
      return unexpected(invalid("cursor", "cursor belongs to the listing of " +
                                              std::string(to_string(cursor->state)) +
                                              " jobs, not " + std::string(to_string(out.state)) +
                                              ": keep the same state while paging"));
    }
    out.after = std::move(*cursor);
  }
  return out;
}

}  // namespace jq::api
