// What the master reads from a request line and headers: query parameters (numbers must be
// finite and in range, or refused naming the parameter), percent-decoding, content types and
// Accept negotiation; and a worker's Retry-After (never negative, never beyond a year).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "api/media_type.hpp"
#include "api/query.hpp"
#include "api/retry_after.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const jq::api::NumberParam wait{
      .name = "wait", .min = 0, .max = 60, .fallback = 0, .integer = false, .unit = "seconds"};
  const auto n = jq::api::query_number(text, wait);
  if (n && (!std::isfinite(*n) || *n < 0 || *n > 60)) std::abort();
  if (!n && n.error().field != "wait") std::abort();
  (void)jq::api::query_value(text, "name");
  (void)jq::api::percent_decode(text, true);
  (void)jq::api::parse_content_type(text);
  (void)jq::api::choose_response_type(text, std::nullopt);
  const auto pause = jq::api::parse_retry_after(text, std::chrono::system_clock::now());
  if (pause && (pause->count() < 0 || *pause > std::chrono::hours(24 * 365))) std::abort();
  return 0;
}
