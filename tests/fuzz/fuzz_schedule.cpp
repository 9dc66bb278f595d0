// Schedule bodies (POST, PATCH) and preview requests, and the ticks of what is accepted. The
// input is
//   <type byte> <schedule body> "\0\0" <preview body>
// (the first byte's low bit chooses JSON or MessagePack for both). A refusal always says what is
// wrong and names the field; an accepted schedule encodes and decodes back to itself (that is how
// it is stored); an accepted preview gives at most `count` ticks, each later than the one before
// and than `from`, and so does the accepted schedule's timetable.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "api/schedule.hpp"
#include "src/schedules/ticks.hpp"

namespace {

constexpr std::string_view kSeparator("\0\0", 2);
constexpr std::int64_t kNowMs = 1'774'656'000'000;  // 2026-03-28T00:00:00Z

std::string_view next_part(std::string_view& rest) {
  const auto at = rest.find(kSeparator);
  std::string_view part = rest.substr(0, at);
  rest = at == std::string_view::npos ? std::string_view{} : rest.substr(at + kSeparator.size());
  return part;
}

void check_refusal(const jq::api::ApiError& error) {
  if (error.message.empty()) std::abort();
  if (error.code == jq::api::ErrorCode::invalid_job && !error.field) std::abort();
}

void check_increasing(const std::vector<std::int64_t>& ticks, std::int64_t after,
                      std::size_t at_most) {
  if (ticks.size() > at_most) std::abort();
  for (std::int64_t t : ticks) {
    if (t <= after) std::abort();
    after = t;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto type = data[0] % 2 ? jq::api::MediaType::json : jq::api::MediaType::msgpack;
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::string_view body = next_part(rest);
  const std::string_view preview_body = rest;

  if (auto patch = jq::api::decode_schedule_patch(body, type, "s"); !patch) {
    check_refusal(patch.error());
  }
  if (auto preview = jq::api::decode_schedule_preview(preview_body, type); !preview) {
    check_refusal(preview.error());
  } else {
    const std::int64_t from = preview->from_ms.value_or(kNowMs);
    check_increasing(jq::schedules::preview_ticks(*preview, kNowMs), from,
                     static_cast<std::size_t>(preview->count));
  }
  const auto schedule = jq::api::decode_schedule(body, type);
  if (!schedule) {
    check_refusal(schedule.error());
    return 0;
  }
  const std::string stored = jq::api::encode_schedule(*schedule);
  const auto back = jq::api::decode_schedule(stored, jq::api::MediaType::msgpack);
  if (!back || !(*back == *schedule) || jq::api::encode_schedule(*back) != stored) std::abort();
  const auto timetable = jq::schedules::timetable_of(*schedule, kNowMs);
  if (const auto first = jq::schedules::tick_after(*schedule, timetable, kNowMs)) {
    check_increasing(jq::schedules::ticks_from(*schedule, timetable, *first, 5), kNowMs, 5);
  }
  return 0;
}
