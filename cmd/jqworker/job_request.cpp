#include "cmd/jqworker/job_request.hpp"

#include <limits>
#include <utility>

#include "api/msgpack_reader.hpp"

namespace jq::worker {
namespace {

using api::MsgpackKind;
using api::MsgpackReader;

constexpr char kNil = '\xc0';
constexpr std::int64_t kMaxStatusBytes = 64 * 1024 * 1024;

// One value read as an integer (a float is cut to one), or skipped: nullopt when it is neither
// or when it is malformed (`reader.error()` then says so).
std::optional<std::int64_t> read_int(MsgpackReader& reader) {
  switch (reader.peek()) {
    case MsgpackKind::integer: {
      const auto i = reader.read_int();
      if (!i) return std::nullopt;
      if (i->above_int64) return std::numeric_limits<std::int64_t>::max();
      return i->value;
    }
    case MsgpackKind::floating: {
      const auto d = reader.read_float();
      if (!d || !(*d > -9e18 && *d < 9e18)) return std::nullopt;
      return static_cast<std::int64_t>(*d);
    }
    default:
      reader.skip();
      return std::nullopt;
  }
}

// True for a boolean true; any other value is skipped.
bool read_true(MsgpackReader& reader) {
  if (reader.peek() == MsgpackKind::boolean) return reader.read_bool().value_or(false);
  reader.skip();
  return false;
}

// Applies one `key: value` of the argument map, reading the value; unknown keys are the job's
// own business. An error message for a directive whose value cannot be used.
std::optional<std::string> apply_directive(std::string_view key, MsgpackReader& reader,
                                           Directives& d) {
  if (key == "sleep_ms") {
    auto ms = read_int(reader);
    if (!ms || *ms < 0) return "sleep_ms must be a non-negative number";
    d.sleep = std::chrono::milliseconds(*ms);
  } else if (key == "status") {
    auto code = read_int(reader);
    if (!code || *code < 100 || *code > 599) return "status must be an HTTP status 100-599";
    d.status = static_cast<int>(*code);
  } else if (key == "retry_after") {
    d.retry_after_s = read_int(reader);
  } else if (key == "status_bytes") {
    auto bytes = read_int(reader);
    if (!bytes || *bytes < 0 || *bytes > kMaxStatusBytes) {
      return "status_bytes must be a number of bytes from 0 to " + std::to_string(kMaxStatusBytes);
    }
    d.status_bytes = static_cast<std::size_t>(*bytes);
  } else if (key == "fail_until") {
    d.fail_until = read_int(reader);
  } else if (key == "garbage") {
    if (reader.peek() == MsgpackKind::str) {
      if (reader.read_str() == std::string_view("bytes")) d.garbage = Directives::Garbage::bytes;
    } else if (read_true(reader)) {
      d.garbage = Directives::Garbage::map;
    }
  } else if (key == "should_retry") {
    if (reader.peek() == MsgpackKind::boolean) {
      d.should_retry = reader.read_bool().value_or(true);
    } else {
      reader.skip();
    }
  } else if (key == "close") {
    d.close = read_true(reader);
  } else if (key == "fail") {
    d.fail = read_true(reader);
  } else if (key == "timeout_reason") {
    d.timeout_reason = read_true(reader);
  } else {
    reader.skip();
  }
  return std::nullopt;
}

// The directives of an argument that is a map (`argument` holds its bytes, already checked
// whole by skip()); any other argument has none.
std::optional<std::string> read_directives(std::string_view argument, Directives& d) {
  MsgpackReader reader(argument);
  if (reader.peek() != MsgpackKind::map) return std::nullopt;
  const std::uint32_t n = reader.read_map_header().value_or(0);
  for (std::uint32_t i = 0; i < n; ++i) {
    if (reader.peek() != MsgpackKind::str) {
      reader.skip();
      reader.skip();
      continue;
    }
    const std::string_view key = *reader.read_str();
    if (auto error = apply_directive(key, reader, d)) return error;
  }
  return std::nullopt;
}

std::string invalid(const MsgpackReader& reader) {
  return "the body is not valid MessagePack: " + std::string(reader.error());
}

}  // namespace

Expected<JobRequest, std::string> parse_job(std::string_view body) {
  MsgpackReader reader(body);
  if (reader.peek() != MsgpackKind::map) {
    return unexpected(std::string("the body must be a MessagePack map"));
  }
  const auto entries = reader.read_map_header();
  if (!entries) return unexpected(invalid(reader));
  JobRequest job;
  job.argument.assign(1, kNil);
  bool has_id = false, has_attempt = false;
  for (std::uint32_t i = 0; i < *entries; ++i) {
    if (reader.peek() != MsgpackKind::str) {
      if (!reader.skip() || !reader.skip()) return unexpected(invalid(reader));
      continue;
    }
    const std::string_view name = *reader.read_str();
    if (name == "id" && reader.peek() == MsgpackKind::str) {
      job.id.assign(*reader.read_str());
      has_id = true;
      continue;
    }
    if (name == "attempt" &&
        (reader.peek() == MsgpackKind::integer || reader.peek() == MsgpackKind::floating)) {
      const std::size_t at = reader.offset();
      const auto attempt = read_int(reader);
      if (attempt) {
        job.attempt = *attempt;
        has_attempt = true;
      } else if (reader.offset() == at) {
        return unexpected(invalid(reader));
      }
      continue;
    }
    const auto value = reader.skip();
    if (!value) return unexpected(invalid(reader));
    if (name == "argument") {
      job.argument.assign(*value);
      if (auto error = read_directives(*value, job.directives))
        return unexpected(std::move(*error));
    }
  }
  if (!reader.at_end()) return unexpected(std::string("the body has bytes after the map"));
  if (!has_id || !has_attempt) {
    return unexpected(std::string("the job needs a string id and an integer attempt"));
  }
  return job;
}

}  // namespace jq::worker
