// An IANA time zone name (a schedule's `timezone`) to the zone of the system's tz database
// (Debian's tzdata, read by Howard Hinnant's date/tz), which knows its daylight-saving history.
#pragma once

#include <string>
#include <string_view>

#include "common/expected.hpp"

namespace date {
class time_zone;
}

namespace jq::api {

// The zone lives as long as the program. The error says what to write instead.
Expected<const date::time_zone*, std::string> find_time_zone(std::string_view name);

}  // namespace jq::api
