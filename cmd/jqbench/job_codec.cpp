#include "cmd/jqbench/job_codec.hpp"

#include <cstdio>
#include <ctime>

#include <msgpack.hpp>
#include <nlohmann/json.hpp>

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

std::string_view format_name(Format f) {
  return f == Format::json ? "json" : "msgpack";
}

JobEncoder::JobEncoder(JobShape shape, std::uint64_t seed) : shape_(std::move(shape)), rng_(seed) {
  put_member(name_, "name", encode_string(shape_.name), true);
  for (int k = 1; shape_.names > 1 && k <= shape_.names; ++k) {
    put_member(spread_names_.emplace_back(), "name",
               encode_string(shape_.name + "-" + std::to_string(k)), true);
  }
  put_member(other_name_, "name", encode_string(shape_.other_name), true);
  fields_ = 1;
  if (shape_.tenants > 0) {
    ++fields_;  // the argument, written per job around its data
    if (shape_.arg_bytes > 0) {
      put_member(data_, "data",
                 encode_string(std::string(static_cast<std::size_t>(shape_.arg_bytes), 'x')));
    }
  } else if (shape_.arg_bytes > 0) {
    put_member(fixed_, "argument",
               encode_string(std::string(static_cast<std::size_t>(shape_.arg_bytes), 'x')));
    ++fields_;
  }
  if (shape_.keep_result) {
    put_member(fixed_, "keep_result", json() ? "true" : "\xc3");
    ++fields_;
  }
  if (shape_.timeout_s > 0) {
    std::string timeout;
    if (json()) {
      timeout = std::to_string(shape_.timeout_s);
    } else {
      put_uint(timeout, static_cast<std::uint32_t>(shape_.timeout_s));
    }
    put_member(fixed_, "timeout", timeout);
    ++fields_;
  }
  if (shape_.priorities > 1) ++fields_;
}

std::string JobEncoder::encode_string(std::string_view s) const {
  if (json()) return nlohmann::json(s).dump();
  std::string out;
  put_str(out, s);
  return out;
}

void JobEncoder::put_member(std::string& out, std::string_view key, std::string_view encoded_value,
                            bool first) const {
  if (json()) {
    if (!first) out.push_back(',');
    out.push_back('"');
    out.append(key);  // jqbench's own keys: nothing to escape
    out.append("\":");
  } else {
    put_str(out, key);
  }
  out.append(encoded_value);
}

void JobEncoder::append_tenant_argument(std::string& out) {
  char tenant[24];
  const int n = std::snprintf(
      tenant, sizeof tenant, "t%llu",
      static_cast<unsigned long long>(rng_() % static_cast<std::uint64_t>(shape_.tenants)));
  std::string& argument = scratch_;
  argument.clear();
  if (json()) {
    argument.push_back('{');
  } else {
    put_byte(argument, 0x80 | (data_.empty() ? 1u : 2u));  // fixmap
  }
  put_member(argument, "tenant",
             encode_string(std::string_view(tenant, static_cast<std::size_t>(n))), true);
  argument.append(data_);
  if (json()) argument.push_back('}');
  put_member(out, "argument", argument);
}

void JobEncoder::append_job(std::string& out) {
  if (json()) {
    out.push_back('{');
  } else {
    put_byte(out, 0x80 | fields_);  // fixmap
  }
  const bool other = shape_.other_share > 0 &&
                     std::uniform_real_distribution<double>(0, 1)(rng_) < shape_.other_share;
  if (other) {
    out.append(other_name_);
  } else if (!spread_names_.empty()) {
    out.append(spread_names_[rng_() % spread_names_.size()]);
  } else {
    out.append(name_);
  }
  if (shape_.tenants > 0) append_tenant_argument(out);
  out.append(fixed_);
  if (shape_.priorities > 1) {
    const auto priority =
        static_cast<std::uint32_t>(rng_() % static_cast<unsigned>(shape_.priorities));
    std::string value;
    if (json()) {
      value = std::to_string(priority);
    } else {
      put_uint(value, priority);
    }
    put_member(out, "priority", value);
  }
  if (json()) out.push_back('}');
}

void JobEncoder::encode(std::string& out, int count, bool as_batch) {
  out.clear();
  if (count == 1 && !as_batch) {
    append_job(out);
    return;
  }
  if (json()) {
    out.push_back('[');
  } else {
    put_array_header(out, static_cast<std::uint32_t>(count));
  }
  for (int i = 0; i < count; ++i) {
    if (json() && i > 0) out.push_back(',');
    append_job(out);
  }
  if (json()) out.push_back(']');
}

namespace {

bool is_json(std::string_view body) {
  return !body.empty() && (body.front() == '{' || body.front() == '[' || body.front() == 'n');
}

std::vector<std::string> decode_json_ids(std::string_view body) {
  std::vector<std::string> ids;
  const auto root = nlohmann::json::parse(body, nullptr, false);
  if (!root.is_object()) return ids;
  if (const auto id = root.find("id"); id != root.end() && id->is_string()) {
    ids.push_back(id->get<std::string>());
  }
  if (const auto list = root.find("ids"); list != root.end() && list->is_array()) {
    for (const auto& id : *list) {
      if (id.is_string()) ids.push_back(id.get<std::string>());
    }
  }
  return ids;
}

}  // namespace

std::vector<std::string> decode_ids(std::string_view body) {
  if (is_json(body)) return decode_json_ids(body);
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
  if (is_json(body)) return body != "null";
  return !body.empty() && static_cast<unsigned char>(body.front()) != 0xc0;
}

std::string iso8601_seconds(std::int64_t unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char iso[32];
  const std::size_t n = std::strftime(iso, sizeof iso, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return std::string(iso, n);
}

std::string encode_success(std::string_view finished_at) {
  std::string out;
  put_byte(out, 0x83);
  put_str(out, "type");
  put_str(out, "success");
  put_str(out, "finished_at");
  put_str(out, finished_at);
  put_str(out, "result");
  put_byte(out, 0xc0);
  return out;
}

Expected<std::string, std::string> answer_decoded(std::string_view body,
                                                  std::string_view finished_at) {
  msgpack::object_handle handle;
  try {
    handle = msgpack::unpack(body.data(), body.size());
  } catch (const std::exception& e) {
    return unexpected(std::string("the job request is not MessagePack: ") + e.what());
  }
  const msgpack::object& root = handle.get();
  if (root.type != msgpack::type::MAP) return unexpected(std::string("the job is not a map"));
  const msgpack::object* id = nullptr;
  const msgpack::object* attempt = nullptr;
  const msgpack::object* argument = nullptr;
  for (std::uint32_t i = 0; i < root.via.map.size; ++i) {
    const auto& kv = root.via.map.ptr[i];
    const std::string_view key = as_view(kv.key);
    if (key == "id") id = &kv.val;
    if (key == "attempt") attempt = &kv.val;
    if (key == "argument") argument = &kv.val;
  }
  if (id == nullptr || id->type != msgpack::type::STR || id->via.str.size == 0) {
    return unexpected(std::string("the job has no string id"));
  }
  if (attempt == nullptr || attempt->type != msgpack::type::POSITIVE_INTEGER) {
    return unexpected(std::string("the job has no attempt"));
  }
  msgpack::sbuffer buffer;
  msgpack::packer<msgpack::sbuffer> pk(buffer);
  pk.pack_map(3);
  pk.pack("type").pack("success");
  pk.pack("finished_at");
  pk.pack_str(static_cast<std::uint32_t>(finished_at.size()));
  pk.pack_str_body(finished_at.data(), static_cast<std::uint32_t>(finished_at.size()));
  pk.pack("result");
  if (argument != nullptr) {
    pk.pack(*argument);
  } else {
    pk.pack_nil();
  }
  return std::string(buffer.data(), buffer.size());
}

}  // namespace jq::bench
