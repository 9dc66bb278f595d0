// POST /v1/jobs: the contract's job table as a table of field rules (field_map.hpp).
#include "api/job.hpp"

#include <array>
#include <limits>

#include "api/field_map.hpp"
#include "api/field_values.hpp"
#include "api/msgpack_reader.hpp"
#include "api/request_body.hpp"

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

constexpr std::array<FieldRule<NewJob>, 6> kJobRules{{
    {"name", true, apply_name},
    {"argument", false, apply_argument},
    {"priority", false, apply_priority},
    {"max_retry", false, apply_max_retry},
    {"keep_result", false, apply_keep_result},
    {"timeout", false, apply_timeout},
}};

constexpr FieldMapSpec kJobSpec{"a job", "", false};

Expected<NewJob, ApiError> decode_job(std::string_view value, const JobDefaults& defaults) {
  NewJob job;
  job.argument = std::string(kNilByte);
  job.max_retry = defaults.max_retry;
  job.timeout = defaults.timeout;
  if (auto decoded = decode_field_map(value, kJobRules, kJobSpec, job); !decoded) {
    return unexpected(decoded.error());
  }
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
  const auto bytes = request_msgpack(body, type);
  if (!bytes) return unexpected(bytes.error());
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

}  // namespace jq::api
