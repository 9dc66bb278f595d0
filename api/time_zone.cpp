#include "api/time_zone.hpp"

#include <stdexcept>

#include <date/tz.h>

namespace jq::api {

Expected<const date::time_zone*, std::string> find_time_zone(std::string_view name) {
  // Names are short ASCII paths ("America/Argentina/Buenos_Aires"); anything else is not one, and
  // must not reach the library as a file path ("../../etc/passwd").
  const bool plausible = !name.empty() && name.size() <= 64 && name.front() != '/' &&
                         name.find("..") == std::string_view::npos &&
                         name.find_first_not_of(
                             "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                             "0123456789/_+-") == std::string_view::npos;
  if (plausible) {
    try {
      return date::locate_zone(name);
    } catch (const std::exception&) {
      // Not in the database: answered below.
    }
  }
  return unexpected("'" + std::string(name) +
                    "' is not a time zone of the IANA database: write a name such as UTC, "
                    "Europe/Berlin or America/New_York");
}

}  // namespace jq::api
