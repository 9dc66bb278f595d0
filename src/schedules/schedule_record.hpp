// A schedule as Redis holds it: its record in the shard it lives in (written by the schedule
// scripts, lua/lib/preamble_1_load_schedule.lua lists its fields) and the claim of its name in
// the name's home shard (lua/claimScheduleName-1.lua).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace jq::schedules {

enum class RecordStatus { active, leaving, gone };

// Where a leaving record goes, and as what.
struct MoveIntent {
  int shard = 0;
  std::int64_t token = 0;
  std::string definition;  // api::encode_schedule
  std::int64_t anchor_ms = 0;
  std::int64_t next_ms = 0;
};

struct ScheduleRecord {
  RecordStatus status = RecordStatus::active;
  std::int64_t token = 0;
  std::int64_t version = 0;
  std::string definition;      // api::encode_schedule
  std::int64_t anchor_ms = 0;  // `every` counts from here when there is no start_at
  std::int64_t next_ms = 0;    // the next tick (0: none); leaving: when to finish the move
  std::int64_t last_run_ms = 0;
  std::string last_job_id;
  std::int64_t runs = 0;
  std::int64_t skipped = 0;  // overlap: skip
  std::int64_t missed = 0;
  std::int64_t duplicates = 0;   // ticks whose job was a duplicate of a held unique_key
  std::optional<MoveIntent> to;  // leaving only
};

// nullopt when the bytes are not a record.
std::optional<ScheduleRecord> decode_schedule_record(std::string_view packed);

// What a record counted, as saveSchedule's `carried` takes it (a move keeps it).
std::string encode_carried(const ScheduleRecord& record);

// "<shard> <token>", with "<from shard> <from token>" after it while the schedule moves.
struct Claim {
  int shard = 0;
  std::int64_t token = 0;
  std::optional<int> from_shard;
  std::int64_t from_token = 0;

  bool operator==(const Claim&) const = default;
};

std::optional<Claim> parse_claim(std::string_view text);
std::string format_claim(const Claim& claim);
// Whether a claim names this record: the same shard and token.
bool claim_names(const std::optional<Claim>& claim, int shard, std::int64_t token);

}  // namespace jq::schedules
