// A worker's answer: a result object checked field by field. Unknown keys are kept (they are
// part of `encoded`), because workers may add their own fields.
#include "api/job_result.hpp"

#include <array>

#include <msgpack.hpp>

#include "api/field_map.hpp"
#include "api/field_values.hpp"
#include "api/msgpack_reader.hpp"
#include "api/request_body.hpp"

namespace jq::api {

namespace {

// The exact bytes of each known field; empty = absent (an encoded value is never empty).
struct ResultFields {
  std::string_view type, finished_at, result, reason, should_retry, error, message;
};

template <std::string_view ResultFields::*Member>
Expected<void, ApiError> keep(ResultFields& fields, std::string_view value) {
  fields.*Member = value;
  return {};
}

constexpr std::array<FieldRule<ResultFields>, 7> kResultRules{{
    {"type", true, keep<&ResultFields::type>},
    {"finished_at", true, keep<&ResultFields::finished_at>},
    {"result", false, keep<&ResultFields::result>},
    {"reason", false, keep<&ResultFields::reason>},
    {"should_retry", false, keep<&ResultFields::should_retry>},
    {"error", false, keep<&ResultFields::error>},
    {"message", false, keep<&ResultFields::message>},
}};

constexpr FieldMapSpec kResultSpec{"the result body", "result.", true};

bool is_nil(std::string_view value) {
  return value == "\xc0";
}

// A string field that is one of `choices`; returns its position.
Expected<std::size_t, std::string> read_choice(std::string_view field, std::string_view value,
                                               std::string_view a, std::string_view b) {
  const auto text = MsgpackReader(value).read_str();
  if (text && *text == a) return 0;
  if (text && *text == b) return 1;
  return unexpected("result." + std::string(field) + " must be \"" + std::string(a) + "\" or \"" +
                    std::string(b) + "\", got " + describe_value(value));
}

constexpr std::size_t kMaxFinishedAtBytes = 64;

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// Whether `text` starts with an ISO 8601 calendar date, YYYY-MM-DD with a month and a day that
// can be. What follows is every language's own way of writing the time (a 'T' or a space, an
// offset as Z, +hh:mm, +hhmm or none, a zone name after it), all of them taken: a worker that
// succeeded must not have its job run again over how its clock prints.
bool starts_with_date(std::string_view text) {
  if (text.size() < 10 || text[4] != '-' || text[7] != '-') return false;
  for (std::size_t i : {0, 1, 2, 3, 5, 6, 8, 9}) {
    if (!is_digit(text[i])) return false;
  }
  const int month = (text[5] - '0') * 10 + (text[6] - '0');
  const int day = (text[8] - '0') * 10 + (text[9] - '0');
  return month >= 1 && month <= 12 && day >= 1 && day <= 31;
}

// Handed on to the pusher as it is: it must at least be a time, not "yesterday".
Expected<void, std::string> check_finished_at(std::string_view value) {
  const auto text = MsgpackReader(value).read_str();
  if (text && text->size() <= kMaxFinishedAtBytes && starts_with_date(*text)) return {};
  return unexpected(
      "result.finished_at must be an ISO 8601 date and time "
      "(2026-12-01T09:00:00.250Z, a string of at most " +
      std::to_string(kMaxFinishedAtBytes) + " bytes), got " + describe_value(value));
}

// reason (default other), should_retry (required), message (default ""); nil counts as absent
// for the optional ones.
Expected<void, std::string> read_failure(const ResultFields& fields, JobResult& out) {
  if (!fields.reason.empty() && !is_nil(fields.reason)) {
    const auto reason = read_choice("reason", fields.reason, "other", "timeout");
    if (!reason) return unexpected(reason.error());
    out.reason = *reason == 0 ? FailureReason::other : FailureReason::timeout;
  }
  if (fields.should_retry.empty()) {
    return unexpected(std::string("result.should_retry is required for a failure"));
  }
  const auto retry = read_bool_field("result.should_retry", fields.should_retry);
  if (!retry) return unexpected(retry.error().message);
  out.should_retry = *retry;
  if (!fields.message.empty() && !is_nil(fields.message)) {
    const auto message = read_string_field("result.message", fields.message);
    if (!message) return unexpected(message.error().message);
    out.message = std::string(*message);
  }
  return {};
}

Expected<void, std::string> check_fields(const ResultFields& fields, JobResult& out) {
  const auto type = read_choice("type", fields.type, "success", "failure");
  if (!type) return unexpected(type.error());
  if (auto finished = check_finished_at(fields.finished_at); !finished) return finished;
  out.type = *type == 0 ? ResultType::success : ResultType::failure;
  if (out.type == ResultType::failure) return read_failure(fields, out);
  return {};
}

void pack_str(msgpack::packer<msgpack::sbuffer>& pk, std::string_view s) {
  pk.pack_str(static_cast<std::uint32_t>(s.size()));
  pk.pack_str_body(s.data(), static_cast<std::uint32_t>(s.size()));
}

}  // namespace

Expected<JobResult, std::string> decode_job_result(std::string_view body, MediaType type) {
  auto bytes = request_msgpack(body, type);
  if (!bytes) return unexpected("result " + bytes.error().message);
  ResultFields fields;
  if (auto decoded = decode_field_map(*bytes, kResultRules, kResultSpec, fields); !decoded) {
    return unexpected(decoded.error().message);
  }
  JobResult result;
  if (auto checked = check_fields(fields, result); !checked) return unexpected(checked.error());
  result.encoded = std::move(*bytes);
  return result;
}

std::string encode_failure(FailureReason reason, bool should_retry, std::string_view message,
                           std::string_view finished_at_iso8601) {
  msgpack::sbuffer out;
  msgpack::packer<msgpack::sbuffer> pk(out);
  pk.pack_map(6);
  pack_str(pk, "type");
  pack_str(pk, "failure");
  pack_str(pk, "reason");
  pack_str(pk, reason == FailureReason::timeout ? "timeout" : "other");
  pack_str(pk, "finished_at");
  pack_str(pk, finished_at_iso8601);
  pack_str(pk, "should_retry");
  should_retry ? pk.pack_true() : pk.pack_false();
  pack_str(pk, "error");
  pk.pack_nil();
  pack_str(pk, "message");
  pack_str(pk, message);
  return std::string(out.data(), out.size());
}

}  // namespace jq::api
