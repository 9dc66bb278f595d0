// POST /v1/jobs: the contract's job table as a table of field rules (field_map.hpp).
#include "api/job.hpp"

#include <array>
#include <bit>
#include <limits>

#include "api/field_map.hpp"
#include "api/field_values.hpp"
#include "api/msgpack_reader.hpp"
#include "api/request_body.hpp"
#include "api/timestamp.hpp"

namespace jq::api {

namespace {

constexpr std::string_view kNilByte = "\xc0";

bool is_name_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == ':' || c == '-';
}

Expected<void, ApiError> apply_name(NewJob& job, std::string_view value) {
  const auto name = read_string_field("name", value);
  if (!name) return unexpected(name.error());
  if (!is_valid_job_name(*name)) {
    return unexpected(
        field_error("name",
                    "name must be 1-128 bytes of A-Z a-z 0-9 _ . : - and must not start with '.', "
                    "':' or '-', got " +
                        describe_value(value)));
  }
  job.name = std::string(*name);
  return {};
}

Expected<void, ApiError> apply_argument(NewJob& job, std::string_view value) {
  job.argument = std::string(value);
  return {};
}

Expected<void, ApiError> apply_priority(NewJob& job, std::string_view value) {
  const auto priority = read_int_field("priority", value, std::numeric_limits<std::int32_t>::min(),
                                       std::numeric_limits<std::int32_t>::max());
  if (!priority) return unexpected(priority.error());
  job.priority = static_cast<std::int32_t>(*priority);
  return {};
}

Expected<void, ApiError> apply_max_retry(NewJob& job, std::string_view value) {
  const auto max_retry = read_int_field("max_retry", value, 0, kMaxRetryLimit);
  if (!max_retry) return unexpected(max_retry.error());
  job.max_retry = static_cast<int>(*max_retry);
  return {};
}

Expected<void, ApiError> apply_keep_result(NewJob& job, std::string_view value) {
  const auto keep = read_bool_field("keep_result", value);
  if (!keep) return unexpected(keep.error());
  job.keep_result = *keep;
  return {};
}

Expected<void, ApiError> apply_timeout(NewJob& job, std::string_view value) {
  const auto timeout = read_seconds_field("timeout", value, kMaxTimeoutSeconds);
  if (!timeout) return unexpected(timeout.error());
  job.timeout = *timeout;
  return {};
}

Expected<void, ApiError> apply_delay(NewJob& job, std::string_view value) {
  const auto delay = read_seconds_or_zero_field("delay", value, kMaxDelaySeconds);
  if (!delay) return unexpected(delay.error());
  job.ready_at.delay = *delay;
  job.ready_at.given = true;
  return {};
}

Expected<void, ApiError> apply_run_at(NewJob& job, std::string_view value) {
  static constexpr std::string_view kRule =
      "run_at must be an ISO 8601 time with an offset, such as 2026-12-01T09:00:00Z or "
      "2026-12-01T11:00:00+02:00, got ";
  const auto text = MsgpackReader(value).read_str();
  if (!text) return unexpected(field_error("run_at", std::string(kRule) + describe_value(value)));
  const auto at_ms = parse_timestamp_ms(*text);
  if (!at_ms) {
    return unexpected(field_error(
        "run_at", std::string(kRule) + describe_value(value) + ", which " + at_ms.error()));
  }
  job.ready_at.run_at_ms = *at_ms;
  job.ready_at.given = true;
  return {};
}

// unique_key and ordering_key: 1-256 bytes of any text.
Expected<std::string, ApiError> read_key_field(std::string_view field, std::string_view value) {
  const auto text = MsgpackReader(value).read_str();
  if (text && !text->empty() && text->size() <= kMaxKeyBytes) return std::string(*text);
  const std::string got = text && !text->empty()
                              ? "a string of " + std::to_string(text->size()) + " bytes"
                              : describe_value(value);
  return unexpected(field_error(field, std::string(field) + " must be a string of 1 to " +
                                           std::to_string(kMaxKeyBytes) + " bytes, got " + got));
}

Expected<void, ApiError> apply_unique_key(NewJob& job, std::string_view value) {
  auto key = read_key_field("unique_key", value);
  if (!key) return unexpected(key.error());
  job.unique_key = std::move(*key);
  return {};
}

Expected<void, ApiError> apply_unique_until(NewJob& job, std::string_view value) {
  const auto text = MsgpackReader(value).read_str();
  if (text && *text == "started") {
    job.unique_until = UniqueUntil::started;
  } else if (text && *text == "finished") {
    job.unique_until = UniqueUntil::finished;
  } else {
    return unexpected(field_error(
        "unique_until",
        "unique_until must be \"started\" or \"finished\", got " + describe_value(value)));
  }
  return {};
}

Expected<void, ApiError> apply_unique_for(NewJob& job, std::string_view value) {
  const auto unique_for = read_seconds_field("unique_for", value, kMaxUniqueForSeconds);
  if (!unique_for) return unexpected(unique_for.error());
  job.unique_for = *unique_for;
  return {};
}

Expected<void, ApiError> apply_ordering_key(NewJob& job, std::string_view value) {
  auto key = read_key_field("ordering_key", value);
  if (!key) return unexpected(key.error());
  job.ordering_key = std::move(*key);
  return {};
}

Expected<void, ApiError> apply_on_duplicate(NewJob& job, std::string_view value) {
  const auto text = MsgpackReader(value).read_str();
  if (text && *text == "keep") {
    job.on_duplicate = OnDuplicate::keep;
  } else if (text && *text == "replace") {
    job.on_duplicate = OnDuplicate::replace;
  } else if (text && *text == "append") {
    job.on_duplicate = OnDuplicate::append;
  } else {
    return unexpected(field_error(
        "on_duplicate",
        "on_duplicate must be \"keep\", \"replace\" or \"append\", got " + describe_value(value)));
  }
  return {};
}

constexpr std::array<FieldRule<NewJob>, 13> kJobRules{{
    {"name", true, apply_name},
    {"argument", false, apply_argument},
    {"priority", false, apply_priority},
    {"max_retry", false, apply_max_retry},
    {"keep_result", false, apply_keep_result},
    {"timeout", false, apply_timeout},
    {"delay", false, apply_delay},
    {"run_at", false, apply_run_at},
    {"unique_key", false, apply_unique_key},
    {"unique_until", false, apply_unique_until},
    {"unique_for", false, apply_unique_for},
    {"ordering_key", false, apply_ordering_key},
    {"on_duplicate", false, apply_on_duplicate},
}};

constexpr FieldMapSpec kJobSpec{"a job", "", false};

// The contract's rules between fields: delay or run_at, and the unique_* options and
// on_duplicate only with unique_key. A merging on_duplicate ends the claim when the job starts
// (a push during the run makes a new job): it does not go with unique_until: finished.
Expected<void, ApiError> check_field_pairs(FieldsGiven given, const NewJob& job) {
  // The fields these rules are about: a job with none of them (the usual one) is done here.
  constexpr FieldsGiven kPaired = field_bit(kJobRules, "delay") | field_bit(kJobRules, "run_at") |
                                  field_bit(kJobRules, "unique_until") |
                                  field_bit(kJobRules, "unique_for") |
                                  field_bit(kJobRules, "on_duplicate");
  static_assert(std::popcount(kPaired) == 5, "a paired field without its rule");
  if ((given & kPaired) == 0) return {};
  const auto has = [given](std::string_view key) { return was_given(given, kJobRules, key); };
  if (has("delay") && has("run_at")) {
    return unexpected(field_error("run_at",
                                  "run_at and delay cannot be given together: delay is seconds "
                                  "after the push, run_at a time; give one of them"));
  }
  for (std::string_view option : {"unique_until", "unique_for", "on_duplicate"}) {
    if (has(option) && !has("unique_key")) {
      return unexpected(field_error(option, std::string(option) +
                                                " applies only to a unique job: give "
                                                "unique_key as well, or leave " +
                                                std::string(option) + " out"));
    }
  }
  if (job.on_duplicate != OnDuplicate::keep && has("unique_until") &&
      job.unique_until == UniqueUntil::finished) {
    return unexpected(field_error(
        "unique_until",
        "unique_until \"finished\" cannot go with on_duplicate \"replace\" or \"append\": a "
        "merged job gives up its claim when it starts, so that a push during the run makes a "
        "new job; leave unique_until out or make it \"started\""));
  }
  return {};
}

Expected<NewJob, ApiError> decode_job(std::string_view value, const JobDefaults& defaults) {
  NewJob job;
  job.argument = std::string(kNilByte);
  job.max_retry = defaults.max_retry;
  job.timeout = defaults.timeout;
  job.unique_for = defaults.unique_for;
  const auto given = decode_field_map(value, kJobRules, kJobSpec, job);
  if (!given) return unexpected(given.error());
  if (auto paired = check_field_pairs(*given, job); !paired) return unexpected(paired.error());
  if (job.on_duplicate != OnDuplicate::keep) job.unique_until = UniqueUntil::started;
  return job;
}

ApiError batch_size_error(std::uint32_t count) {
  if (count == 0) {
    return ApiError::make(ErrorCode::bad_request, "the batch is empty: send 1 to " +
                                                      std::to_string(kMaxBatchJobs) +
                                                      " jobs in the array, or one job as a map");
  }
  return ApiError::make(ErrorCode::bad_request,
                        "the batch has " + std::to_string(count) + " jobs: at most " +
                            std::to_string(kMaxBatchJobs) + " fit in one request, split it");
}

// The array at the reader's cursor; the first bad job names its index.
Expected<PushRequest, ApiError> decode_batch(MsgpackReader& reader, const JobDefaults& defaults) {
  const std::uint32_t count = reader.read_array_header().value_or(0);
  if (count == 0 || count > kMaxBatchJobs) return unexpected(batch_size_error(count));
  PushRequest request;
  request.batch = true;
  request.jobs.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    const auto value = reader.skip();
    if (!value) return unexpected(malformed_error(reader));
    auto job = decode_job(*value, defaults);
    if (!job) {
      ApiError error = std::move(job).error();
      error.message = "job " + std::to_string(i) + ": " + error.message;
      error.index = i;
      return unexpected(std::move(error));
    }
    request.jobs.push_back(std::move(*job));
  }
  return request;
}

}  // namespace

bool is_valid_job_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxNameBytes) return false;
  if (name.front() == '.' || name.front() == ':' || name.front() == '-') return false;
  for (char c : name) {
    if (!is_name_char(c)) return false;
  }
  return true;
}

Expected<PushRequest, ApiError> decode_push(std::string_view body, MediaType type,
                                            const JobDefaults& defaults) {
  auto bytes = request_msgpack(body, type);
  if (!bytes) {
    // A job's field, not the path inside it: an argument is the pusher's own business.
    ApiError error = std::move(bytes.error());
    if (error.field) *error.field = error.field->substr(0, error.field->find_first_of(".["));
    return unexpected(std::move(error));
  }
  MsgpackReader reader(*bytes);
  if (reader.peek() == MsgpackKind::array) return decode_batch(reader, defaults);
  if (reader.peek() != MsgpackKind::map) {
    return unexpected(
        ApiError::make(ErrorCode::bad_request, "body must be a job (a map) or an array of 1 to " +
                                                   std::to_string(kMaxBatchJobs) + " jobs, got " +
                                                   describe_value(*bytes)));
  }
  auto job = decode_job(*bytes, defaults);
  if (!job) return unexpected(job.error());
  PushRequest request;
  request.jobs.push_back(std::move(*job));
  return request;
}

Expected<NewJob, ApiError> decode_job_map(std::string_view map_value, const JobDefaults& defaults) {
  return decode_job(map_value, defaults);
}

}  // namespace jq::api
