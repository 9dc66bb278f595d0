// The scalar values Lua's cmsgpack writes into the records the scripts keep, read from
// msgpack-cxx objects: strings (as str, or bin), and numbers (whole ones as integers, others as
// doubles). Anything else reads as empty or 0.
#pragma once

#include <cstdint>
#include <string>

#include <msgpack.hpp>

namespace jq::store {

inline std::string as_string(const msgpack::object& o) {
  if (o.type == msgpack::type::STR) return std::string(o.via.str.ptr, o.via.str.size);
  if (o.type == msgpack::type::BIN) return std::string(o.via.bin.ptr, o.via.bin.size);
  return {};
}

inline std::int64_t as_int(const msgpack::object& o) {
  switch (o.type) {
    case msgpack::type::POSITIVE_INTEGER:
      return static_cast<std::int64_t>(o.via.u64);
    case msgpack::type::NEGATIVE_INTEGER:
      return o.via.i64;
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64:
      return static_cast<std::int64_t>(o.via.f64);
    default:
      return 0;
  }
}

}  // namespace jq::store
