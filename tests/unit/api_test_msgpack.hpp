// Builds exact MessagePack bytes for tests, one typed value at a time, with msgpack-cxx's packer
// (so a test can say "float 3.0" or "int32 5" where a JSON text could not).
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>

#include <msgpack.hpp>

namespace jq::api::test {

class Mp {
 public:
  Mp& map(std::uint32_t pairs) {
    pk_.pack_map(pairs);
    return *this;
  }
  Mp& array(std::uint32_t n) {
    pk_.pack_array(n);
    return *this;
  }
  Mp& str(std::string_view s) {
    pk_.pack_str(static_cast<std::uint32_t>(s.size()));
    pk_.pack_str_body(s.data(), static_cast<std::uint32_t>(s.size()));
    return *this;
  }
  Mp& bin(std::string_view s) {
    pk_.pack_bin(static_cast<std::uint32_t>(s.size()));
    pk_.pack_bin_body(s.data(), static_cast<std::uint32_t>(s.size()));
    return *this;
  }
  Mp& ext(std::int8_t type, std::string_view s) {
    pk_.pack_ext(s.size(), type);
    pk_.pack_ext_body(s.data(), static_cast<std::uint32_t>(s.size()));
    return *this;
  }
  // Integers: i/u use the smallest encoding; i32 always writes 0xd2 and four bytes.
  Mp& i(std::int64_t v) {
    pk_.pack_int64(v);
    return *this;
  }
  Mp& u(std::uint64_t v) {
    pk_.pack_uint64(v);
    return *this;
  }
  Mp& i32(std::int32_t v) {
    pk_.pack_fix_int32(v);
    return *this;
  }
  // Floats are written by hand: msgpack-cxx's pack_double/pack_float turn 3.0 into the int 3.
  Mp& f64(double v) { return raw_be(0xcb, std::bit_cast<std::uint64_t>(v), 8); }
  Mp& f32(float v) { return raw_be(0xca, std::bit_cast<std::uint32_t>(v), 4); }
  Mp& boolean(bool v) {
    v ? pk_.pack_true() : pk_.pack_false();
    return *this;
  }
  Mp& nil() {
    pk_.pack_nil();
    return *this;
  }
  Mp& raw(std::string_view bytes) {
    buf_.write(bytes.data(), bytes.size());
    return *this;
  }

  std::string bytes() const { return std::string(buf_.data(), buf_.size()); }
  operator std::string() const { return bytes(); }  // NOLINT: implicit for brevity in tests

 private:
  Mp& raw_be(std::uint8_t type, std::uint64_t bits, int size) {
    std::string bytes(1, static_cast<char>(type));
    for (int i = size - 1; i >= 0; --i) bytes += static_cast<char>(bits >> (8 * i));
    return raw(bytes);
  }

  msgpack::sbuffer buf_;
  msgpack::packer<msgpack::sbuffer> pk_{buf_};
};

}  // namespace jq::api::test
