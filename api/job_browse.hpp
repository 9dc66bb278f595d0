// GET /v1/jobs?state=&name=&limit=&cursor= (the contract's "browse jobs"): the query, and the
// cursor that says where the previous page ended. A cursor is a job's place in the listing's
// order: its sort score (priority for queued jobs; the due, deadline or failure time in ms
// otherwise), its member (queued: ready stamp and field; otherwise the field) and its shard.
// Written as "<state letter>.<score>.<shard>.<member>", URL-safe as it is; clients treat it as
// opaque.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "api/error.hpp"
#include "common/expected.hpp"

namespace jq::api {

inline constexpr int kMaxBrowseLimit = 1000;
inline constexpr int kDefaultBrowseLimit = 100;

enum class BrowseState { queued, scheduled, running, dead };
std::string_view to_string(BrowseState state);

struct BrowseCursor {
  BrowseState state = BrowseState::queued;
  std::int64_t score = 0;
  int shard = 0;
  std::string member;

  bool operator==(const BrowseCursor&) const = default;
};

struct JobBrowse {
  BrowseState state = BrowseState::queued;
  std::string name;  // empty: every name
  int limit = kDefaultBrowseLimit;
  std::optional<BrowseCursor> after;  // none: the first page
};

// 400 naming `state`, `name`, `limit` or `cursor` (also a cursor of another state's listing).
Expected<JobBrowse, ApiError> parse_job_browse(std::string_view query);
std::string format_cursor(const BrowseCursor& cursor);

}  // namespace jq::api
