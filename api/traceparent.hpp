// W3C Trace Context: the `traceparent` header a pusher may send with a push, kept with its jobs
// and sent to the worker on every attempt (https://www.w3.org/TR/trace-context/).
#pragma once

#include <string_view>

namespace jq::api {

// True for version 00 exactly as the spec writes it: "00-<32 hex>-<16 hex>-<2 hex>", lower-case
// hex, trace id and parent id not all zeros. Anything else (other versions included) is not
// kept: a push with an unusable traceparent is stored without one rather than refused.
bool is_valid_traceparent(std::string_view header);

}  // namespace jq::api
