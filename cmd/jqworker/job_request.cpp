#include "cmd/jqworker/job_request.hpp"

#include <limits>
#include <utility>

#include <msgpack.hpp>

namespace jq::worker {
namespace {

constexpr char kNil = '\xc0';
constexpr std::size_t kMaxDepth = 64;  // nesting of arrays and maps in one value

// The entry count and header size of a MessagePack map at the start of `bytes`.
std::optional<std::pair<std::uint32_t, std::size_t>> map_header(std::string_view bytes) {
  if (bytes.empty()) return std::nullopt;
  const auto byte = [&](std::size_t i) { return static_cast<std::uint8_t>(bytes[i]); };
  if ((byte(0) & 0xf0) == 0x80) return std::pair<std::uint32_t, std::size_t>{byte(0) & 0x0f, 1};
  if (byte(0) == 0xde && bytes.size() >= 3) {
    return std::pair<std::uint32_t, std::size_t>{(byte(1) << 8) | byte(2), 3};
  }
  if (byte(0) == 0xdf && bytes.size() >= 5) {
    const std::uint32_t n = (std::uint32_t{byte(1)} << 24) | (std::uint32_t{byte(2)} << 16) |
                            (std::uint32_t{byte(3)} << 8) | byte(4);
    return std::pair<std::uint32_t, std::size_t>{n, 5};
  }
  return std::nullopt;
}

std::optional<std::int64_t> as_int(const msgpack::object& o) {
  switch (o.type) {
    case msgpack::type::POSITIVE_INTEGER:
      if (o.via.u64 > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        return std::numeric_limits<std::int64_t>::max();
      }
      return static_cast<std::int64_t>(o.via.u64);
    case msgpack::type::NEGATIVE_INTEGER:
      return o.via.i64;
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64:
      if (!(o.via.f64 > -9e18 && o.via.f64 < 9e18)) return std::nullopt;
      return static_cast<std::int64_t>(o.via.f64);
    default:
      return std::nullopt;
  }
}

bool is_true(const msgpack::object& o) {
  return o.type == msgpack::type::BOOLEAN && o.via.boolean;
}

bool is_string(const msgpack::object& o, std::string_view s) {
  return o.type == msgpack::type::STR && std::string_view(o.via.str.ptr, o.via.str.size) == s;
}

// Applies one `key: value` of the argument map; unknown keys are the job's own business.
// Returns an error message for a directive whose value cannot be used.
std::optional<std::string> apply_directive(std::string_view key, const msgpack::object& value,
                                           Directives& d) {
  if (key == "sleep_ms") {
    auto ms = as_int(value);
    if (!ms || *ms < 0) return "sleep_ms must be a non-negative number";
    d.sleep = std::chrono::milliseconds(*ms);
  } else if (key == "status") {
    auto code = as_int(value);
    if (!code || *code < 100 || *code > 599) return "status must be an HTTP status 100-599";
    d.status = static_cast<int>(*code);
  } else if (key == "retry_after") {
    d.retry_after_s = as_int(value);
  } else if (key == "fail_until") {
    d.fail_until = as_int(value);
  } else if (key == "garbage") {
    if (is_true(value)) d.garbage = Directives::Garbage::map;
    if (is_string(value, "bytes")) d.garbage = Directives::Garbage::bytes;
  } else if (key == "should_retry") {
    if (value.type == msgpack::type::BOOLEAN) d.should_retry = value.via.boolean;
  } else if (key == "close") {
    d.close = is_true(value);
  } else if (key == "fail") {
    d.fail = is_true(value);
  } else if (key == "timeout_reason") {
    d.timeout_reason = is_true(value);
  }
  return std::nullopt;
}

std::optional<std::string> read_directives(const msgpack::object& argument, Directives& d) {
  if (argument.type != msgpack::type::MAP) return std::nullopt;
  for (std::uint32_t i = 0; i < argument.via.map.size; ++i) {
    const auto& kv = argument.via.map.ptr[i];
    if (kv.key.type != msgpack::type::STR) continue;
    auto error =
        apply_directive(std::string_view(kv.key.via.str.ptr, kv.key.via.str.size), kv.val, d);
    if (error) return error;
  }
  return std::nullopt;
}

// Walks the top-level map one `key: value` at a time, keeping the byte offset of each value.
// msgpack::unpack throws on bad bytes; parse_job turns that into an error message.
class JobParser {
 public:
  // No container in `body` can hold more entries than it has bytes: declared sizes beyond that
  // are refused before msgpack-cxx allocates room for them.
  explicit JobParser(std::string_view body)
      : body_(body),
        limit_(body.size(), body.size(), body.size(), body.size(), body.size(), kMaxDepth) {
    job_.argument.assign(1, kNil);
  }

  Expected<JobRequest, std::string> parse() {
    auto header = map_header(body_);
    if (!header) return unexpected(std::string("the body must be a MessagePack map"));
    offset_ = header->second;
    for (std::uint32_t i = 0; i < header->first; ++i) {
      if (auto error = read_field()) return unexpected(std::move(*error));
    }
    if (offset_ != body_.size()) return unexpected(std::string("the body has bytes after the map"));
    if (!has_id_ || !has_attempt_) {
      return unexpected(std::string("the job needs a string id and an integer attempt"));
    }
    return std::move(job_);
  }

 private:
  std::optional<std::string> read_field() {
    msgpack::object_handle key =
        msgpack::unpack(body_.data(), body_.size(), offset_, nullptr, nullptr, limit_);
    const std::size_t value_begin = offset_;
    msgpack::object_handle value =
        msgpack::unpack(body_.data(), body_.size(), offset_, nullptr, nullptr, limit_);
    if (key->type != msgpack::type::STR) return std::nullopt;
    const std::string_view name(key->via.str.ptr, key->via.str.size);
    if (name == "id" && value->type == msgpack::type::STR) {
      job_.id.assign(value->via.str.ptr, value->via.str.size);
      has_id_ = true;
    } else if (auto attempt = as_int(*value); name == "attempt" && attempt) {
      job_.attempt = *attempt;
      has_attempt_ = true;
    } else if (name == "argument") {
      job_.argument.assign(body_.substr(value_begin, offset_ - value_begin));
      return read_directives(*value, job_.directives);
    }
    return std::nullopt;
  }

  std::string_view body_;
  msgpack::unpack_limit limit_;
  std::size_t offset_ = 0;
  JobRequest job_;
  bool has_id_ = false;
  bool has_attempt_ = false;
};

}  // namespace

Expected<JobRequest, std::string> parse_job(std::string_view body) {
  try {
    return JobParser(body).parse();
  } catch (const std::exception& e) {
    return unexpected(std::string("the body is not valid MessagePack: ") + e.what());
  }
}

}  // namespace jq::worker
