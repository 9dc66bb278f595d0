#include "cmd/jqbench/job_codec.hpp"

#include <ctime>

#include <msgpack.hpp>

namespace jq::bench {
namespace {

void put_byte(std::string& out, unsigned value) {
  out.push_back(static_cast<char>(value & 0xff));
}

void put_be(std::string& out, std::uint64_t value, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) put_byte(out, static_cast<unsigned>(value >> (8 * i)));
}

void put_str(std::string& out, std::string_view s) {
  if (s.size() < 32) {
    put_byte(out, 0xa0 | static_cast<unsigned>(s.size()));
  } else if (s.size() < 256) {
    put_byte(out, 0xd9);
    put_be(out, s.size(), 1);
  } else if (s.size() < 65536) {
    put_byte(out, 0xda);
    put_be(out, s.size(), 2);
  } else {
    put_byte(out, 0xdb);
    put_be(out, s.size(), 4);
  }
  out.append(s);
}

void put_uint(std::string& out, std::uint32_t v) {
  if (v < 128) {
    put_byte(out, v);
  } else {
    put_byte(out, 0xce);
    put_be(out, v, 4);
  }
}

void put_array_header(std::string& out, std::uint32_t n) {
  if (n < 16) {
    put_byte(out, 0x90 | n);
  } else if (n < 65536) {
    put_byte(out, 0xdc);
    put_be(out, n, 2);
  } else {
    put_byte(out, 0xdd);
    put_be(out, n, 4);
  }
}

std::string_view as_view(const msgpack::object& o) {
  return o.type == msgpack::type::STR ? std::string_view(o.via.str.ptr, o.via.str.size)
                                      : std::string_view();
}

}  // namespace

JobEncoder::JobEncoder(JobShape shape, std::uint64_t seed) : shape_(std::move(shape)), rng_(seed) {
  put_str(fixed_, "name");
  put_str(fixed_, shape_.name);
  fields_ = 1;
  if (shape_.arg_bytes > 0) {
    put_str(fixed_, "argument");
    put_str(fixed_, std::string(static_cast<std::size_t>(shape_.arg_bytes), 'x'));
    ++fields_;
  }
  if (shape_.keep_result) {
    put_str(fixed_, "keep_result");
    put_byte(fixed_, 0xc3);  // true
    ++fields_;
  }
  if (shape_.priorities > 1) ++fields_;
}

void JobEncoder::append_job(std::string& out) {
  put_byte(out, 0x80 | fields_);  // fixmap
  out.append(fixed_);
  if (shape_.priorities > 1) {
    put_str(out, "priority");
    put_uint(out, static_cast<std::uint32_t>(rng_() % static_cast<unsigned>(shape_.priorities)));
  }
}

void JobEncoder::encode(std::string& out, int count, bool as_batch) {
  out.clear();
  if (count == 1 && !as_batch) {
    append_job(out);
    return;
  }
  put_array_header(out, static_cast<std::uint32_t>(count));
  for (int i = 0; i < count; ++i) append_job(out);
}

std::vector<std::string> decode_ids(std::string_view body) {
  std::vector<std::string> ids;
  try {
    const auto handle = msgpack::unpack(body.data(), body.size());
    const msgpack::object& root = handle.get();
    if (root.type != msgpack::type::MAP) return ids;
    for (std::uint32_t i = 0; i < root.via.map.size; ++i) {
      const auto& kv = root.via.map.ptr[i];
      if (as_view(kv.key) == "id" && kv.val.type == msgpack::type::STR) {
        ids.emplace_back(as_view(kv.val));
      } else if (as_view(kv.key) == "ids" && kv.val.type == msgpack::type::ARRAY) {
        for (std::uint32_t j = 0; j < kv.val.via.array.size; ++j) {
          ids.emplace_back(as_view(kv.val.via.array.ptr[j]));
        }
      }
    }
  } catch (const std::exception&) {
    ids.clear();
  }
  return ids;
}

bool holds_result(std::string_view body) {
  return !body.empty() && static_cast<unsigned char>(body.front()) != 0xc0;
}

std::string encode_success(std::int64_t unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char iso[32];
  std::strftime(iso, sizeof iso, "%Y-%m-%dT%H:%M:%SZ", &utc);
  std::string out;
  put_byte(out, 0x83);
  put_str(out, "type");
  put_str(out, "success");
  put_str(out, "finished_at");
  put_str(out, iso);
  put_str(out, "result");
  put_byte(out, 0xc0);
  return out;
}

}  // namespace jq::bench
