// Query strings (Boost 1.74 has no Boost.URL): "a=1&b=x%20y" -> values, percent-decoded, and the
// numeric parameters checked the way the contract says (finite, in range, or 400 naming them).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "api/error.hpp"
#include "common/expected.hpp"

namespace jq::api {

// The decoded value of the first `name=` in `query`; nullopt when absent. A bad % escape is a 400
// naming the parameter (taken as absent, `state=dead%` would list the default state).
Expected<std::optional<std::string>, ApiError> query_value(std::string_view query,
                                                           std::string_view name);

// Percent-decoding ('+' is a space in queries only); nullopt on a bad % escape.
std::optional<std::string> percent_decode(std::string_view text, bool plus_is_space);

// What a numeric query parameter may hold.
struct NumberParam {
  std::string_view name;  // e.g. "wait"
  double min = 0;
  double max = 0;
  double fallback = 0;  // the value when the parameter is absent
  bool integer = false;
  std::string_view unit;  // words after the range in the message, e.g. "seconds"
};

// The parameter's value: `fallback` when absent; a finite decimal number in [min, max] (a whole
// one when `integer`); otherwise bad_request with `field` = the name. "nan", "inf", "1e309",
// hexadecimal and empty values are refused.
Expected<double, ApiError> query_number(std::string_view query, const NumberParam& param);

}  // namespace jq::api
