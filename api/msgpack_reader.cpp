#include "api/msgpack_reader.hpp"

#include <bit>
#include <cstdint>
#include <limits>
#include <string>

namespace jq::api {

namespace {

bool is_container(MsgpackKind kind) {
  return kind == MsgpackKind::array || kind == MsgpackKind::map;
}

std::string at_byte(std::size_t offset) {
  return " at byte " + std::to_string(offset);
}

// The kinds of the type bytes 0xc0-0xdf, in order (0xc1 is reserved: never used).
constexpr MsgpackKind kTypedKinds[32] = {
    MsgpackKind::nil,     MsgpackKind::invalid, MsgpackKind::boolean,  MsgpackKind::boolean,
    MsgpackKind::bin,     MsgpackKind::bin,     MsgpackKind::bin,      MsgpackKind::ext,
    MsgpackKind::ext,     MsgpackKind::ext,     MsgpackKind::floating, MsgpackKind::floating,
    MsgpackKind::integer, MsgpackKind::integer, MsgpackKind::integer,  MsgpackKind::integer,
    MsgpackKind::integer, MsgpackKind::integer, MsgpackKind::integer,  MsgpackKind::integer,
    MsgpackKind::ext,     MsgpackKind::ext,     MsgpackKind::ext,      MsgpackKind::ext,
    MsgpackKind::ext,     MsgpackKind::str,     MsgpackKind::str,      MsgpackKind::str,
    MsgpackKind::array,   MsgpackKind::array,   MsgpackKind::map,      MsgpackKind::map,
};

// The kind named by a MessagePack type byte (the first byte of every value).
MsgpackKind kind_of(std::uint8_t b) {
  if (b <= 0x7f || b >= 0xe0) return MsgpackKind::integer;  // positive and negative fixint
  if (b <= 0x8f) return MsgpackKind::map;
  if (b <= 0x9f) return MsgpackKind::array;
  if (b <= 0xbf) return MsgpackKind::str;
  return kTypedKinds[b - 0xc0];
}

MsgpackInt from_unsigned(std::uint64_t u) {
  const bool above = u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  return {above, static_cast<std::int64_t>(u)};  // modular: as_unsigned() gives u back
}

// The n bytes at `at` as a big-endian number.
std::uint64_t read_be_at(std::string_view bytes, std::size_t at, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v = (v << 8) | static_cast<std::uint8_t>(bytes[at + i]);
  return v;
}

// Where the scalar that starts at `at` ends: its whole size (type byte, length fields and
// payload) and the size of its head (type byte and length fields), when it is one the fast paths
// below take and all of it is there; a size of 0 otherwise (a container, a reserved byte, a value
// cut short: the full path reads those and says what is wrong). The fast paths answer exactly
// what the full path would: they only skip its Header.
struct ScalarExtent {
  std::size_t size = 0;
  std::size_t head = 1;
};

ScalarExtent scalar_extent(std::string_view bytes, std::size_t at) {
  const std::size_t left = bytes.size() - at;
  const auto b = static_cast<std::uint8_t>(bytes[at]);
  ScalarExtent e;
  if (b <= 0x7f || b >= 0xe0) {
    e.size = 1;  // fixint
  } else if (b >= 0xa0 && b <= 0xbf) {
    e.size = 1 + (b & 0x1f);  // fixstr
  } else if (b == 0xc0 || b == 0xc2 || b == 0xc3) {
    e.size = 1;  // nil, false, true
  } else if (b >= 0xcc && b <= 0xd3) {
    e.size = 1 + (std::size_t{1} << (b & 0x03));  // (u)int 8-64
  } else if (b == 0xca || b == 0xcb) {
    e.size = b == 0xca ? 5 : 9;  // float 32, 64
  } else if ((b == 0xd9 || b == 0xc4) && left >= 2) {
    e.head = 2;  // str 8, bin 8
  } else if ((b == 0xda || b == 0xc5) && left >= 3) {
    e.head = 3;  // str 16, bin 16
  } else if ((b == 0xdb || b == 0xc6) && left >= 5) {
    e.head = 5;  // str 32, bin 32
  }
  if (e.head > 1) e.size = e.head + read_be_at(bytes, at + 1, e.head - 1);
  if (e.size > left) e.size = 0;
  return e;
}
}  // namespace

std::string_view to_string(MsgpackKind kind) {
  switch (kind) {
    case MsgpackKind::nil:
      return "nil";
    case MsgpackKind::boolean:
      return "boolean";
    case MsgpackKind::integer:
      return "integer";
    case MsgpackKind::floating:
      return "float";
    case MsgpackKind::str:
      return "string";
    case MsgpackKind::bin:
      return "binary";
    case MsgpackKind::array:
      return "array";
    case MsgpackKind::map:
      return "map";
    case MsgpackKind::ext:
      return "ext";
    case MsgpackKind::invalid:
      break;
  }
  return "invalid";
}

// One decoded type byte with its length fields and, for scalars, its payload.
struct MsgpackReader::Header {
  MsgpackKind kind = MsgpackKind::invalid;
  std::uint32_t count = 0;   // elements of an array, pairs of a map
  std::string_view payload;  // the data of a str, bin or ext
  std::int8_t ext_type = 0;
  MsgpackInt integer;
  double floating = 0;
  bool boolean = false;
};

MsgpackKind MsgpackReader::peek() const {
  if (at_end()) return MsgpackKind::invalid;
  return kind_of(static_cast<std::uint8_t>(bytes_[pos_]));
}

bool MsgpackReader::fail(std::string why, std::size_t at) {
  error_ = std::move(why) + at_byte(at);
  return false;
}

std::optional<std::string_view> MsgpackReader::take(std::uint64_t n) {
  if (n > remaining()) {
    fail("truncated: " + std::to_string(n) + " bytes declared, " + std::to_string(remaining()) +
             " left",
         pos_);
    return std::nullopt;
  }
  std::string_view out = bytes_.substr(pos_, n);
  pos_ += n;
  return out;
}

template <class T>
std::optional<T> MsgpackReader::read_be() {
  auto raw = take(sizeof(T));
  if (!raw) return std::nullopt;
  return static_cast<T>(read_be_at(*raw, 0, sizeof(T)));
}

std::optional<MsgpackReader::Header> MsgpackReader::read_header() {
  const std::size_t start = pos_;
  if (at_end()) {
    fail("truncated: a value is missing", pos_);
    return std::nullopt;
  }
  const auto b = static_cast<std::uint8_t>(bytes_[pos_++]);
  Header h;
  h.kind = kind_of(b);
  bool ok = true;
  std::optional<std::uint64_t> len;  // the declared length of a str/bin/ext payload or container
  if (b <= 0x7f) {
    h.integer = {false, b};
  } else if (b >= 0xe0) {
    h.integer = {false, static_cast<std::int8_t>(b)};
  } else if (b <= 0x9f) {
    len = b & 0x0f;
  } else if (b <= 0xbf) {
    len = b & 0x1f;
  } else {
    ok = read_typed_header(b, h, len);
  }
  if (ok && len) ok = is_container(h.kind) ? check_count(h, *len, start) : read_payload(h, *len);
  if (!ok) pos_ = start;
  return ok ? std::optional<Header>(h) : std::nullopt;
}

// The type bytes 0xc0-0xdf: everything with a fixed code and explicit length fields.
bool MsgpackReader::read_typed_header(std::uint8_t b, Header& h,
                                      std::optional<std::uint64_t>& len) {
  switch (b) {
    case 0xc0:
      return true;
    case 0xc1:
      return fail("reserved byte 0xc1 (never used in MessagePack)", pos_ - 1);
    case 0xc2:
    case 0xc3:
      h.boolean = b == 0xc3;
      return true;
    case 0xc4:
    case 0xd9:
      return assign(len, read_be<std::uint8_t>());
    case 0xc5:
    case 0xda:
    case 0xdc:
    case 0xde:
      return assign(len, read_be<std::uint16_t>());
    case 0xc6:
    case 0xdb:
    case 0xdd:
    case 0xdf:
      return assign(len, read_be<std::uint32_t>());
    case 0xc7:
      return assign(len, read_be<std::uint8_t>()) && read_ext_type(h);
    case 0xc8:
      return assign(len, read_be<std::uint16_t>()) && read_ext_type(h);
    case 0xc9:
      return assign(len, read_be<std::uint32_t>()) && read_ext_type(h);
    case 0xd4:
    case 0xd5:
    case 0xd6:
    case 0xd7:
    case 0xd8:
      len = std::uint64_t{1} << (b - 0xd4);
      return read_ext_type(h);
    case 0xca:
      return read_float32(h);
    case 0xcb:
      return read_float64(h);
    default:
      return read_int_body(b, h);
  }
}

bool MsgpackReader::read_ext_type(Header& h) {
  auto type = read_be<std::uint8_t>();
  if (type) h.ext_type = static_cast<std::int8_t>(*type);
  return type.has_value();
}

bool MsgpackReader::read_float32(Header& h) {
  auto bits = read_be<std::uint32_t>();
  if (bits) h.floating = std::bit_cast<float>(*bits);
  return bits.has_value();
}

bool MsgpackReader::read_float64(Header& h) {
  auto bits = read_be<std::uint64_t>();
  if (bits) h.floating = std::bit_cast<double>(*bits);
  return bits.has_value();
}

// 0xcc-0xcf: uint 8/16/32/64; 0xd0-0xd3: int 8/16/32/64.
bool MsgpackReader::read_int_body(std::uint8_t b, Header& h) {
  std::optional<std::uint64_t> u;
  switch (b & 0x03) {
    case 0:
      u = read_be<std::uint8_t>();
      break;
    case 1:
      u = read_be<std::uint16_t>();
      break;
    case 2:
      u = read_be<std::uint32_t>();
      break;
    default:
      u = read_be<std::uint64_t>();
      break;
  }
  if (!u) return false;
  if (b <= 0xcf) {
    h.integer = from_unsigned(*u);
    return true;
  }
  const int bits = 8 << (b & 0x03);
  std::int64_t v = static_cast<std::int64_t>(*u);
  if (bits < 64 && (*u >> (bits - 1)) != 0) v -= std::int64_t{1} << bits;  // sign-extend
  h.integer = {false, v};
  return true;
}

// A container's count cannot exceed the bytes left: every element takes at least one byte.
bool MsgpackReader::check_count(Header& h, std::uint64_t count, std::size_t start) {
  const std::uint64_t min_bytes = h.kind == MsgpackKind::map ? 2 * count : count;
  if (min_bytes > remaining()) {
    return fail("truncated: the " + std::string(to_string(h.kind)) + " declares " +
                    std::to_string(count) + " elements but only " + std::to_string(remaining()) +
                    " bytes follow",
                start);
  }
  h.count = static_cast<std::uint32_t>(count);
  return true;
}

bool MsgpackReader::read_payload(Header& h, std::uint64_t len) {
  auto payload = take(len);
  if (payload) h.payload = *payload;
  return payload.has_value();
}

bool MsgpackReader::assign(std::optional<std::uint64_t>& out, std::optional<std::uint64_t> in) {
  out = in;
  return in.has_value();
}

std::optional<MsgpackReader::Header> MsgpackReader::read_kind(MsgpackKind want) {
  const std::size_t start = pos_;
  auto h = read_header();
  if (h && h->kind != want) {
    fail("expected " + std::string(to_string(want)) + ", got " + std::string(to_string(h->kind)),
         start);
    pos_ = start;
    return std::nullopt;
  }
  return h;
}

// Each reader below takes the encodings nearly every value here has (fixmap, fixarray, fixstr,
// str 8, fixint, ...) without the full path's Header; anything else, and every error, goes the
// full path. About 170 instructions per value before, a few dozen now (callgrind: issue 14).
std::optional<std::uint32_t> MsgpackReader::read_map_header() {
  if (!at_end()) {
    const auto b = static_cast<std::uint8_t>(bytes_[pos_]);
    const std::uint32_t n = b & 0x0f;
    if (b >= 0x80 && b <= 0x8f && 2 * std::size_t{n} < remaining()) {
      ++pos_;
      return n;
    }
  }
  auto h = read_kind(MsgpackKind::map);
  return h ? std::optional(h->count) : std::nullopt;
}

std::optional<std::uint32_t> MsgpackReader::read_array_header() {
  if (!at_end()) {
    const auto b = static_cast<std::uint8_t>(bytes_[pos_]);
    const std::uint32_t n = b & 0x0f;
    if (b >= 0x90 && b <= 0x9f && std::size_t{n} < remaining()) {
      ++pos_;
      return n;
    }
  }
  auto h = read_kind(MsgpackKind::array);
  return h ? std::optional(h->count) : std::nullopt;
}

std::optional<std::string_view> MsgpackReader::read_str() {
  if (!at_end() && kind_of(static_cast<std::uint8_t>(bytes_[pos_])) == MsgpackKind::str) {
    if (const ScalarExtent e = scalar_extent(bytes_, pos_); e.size > 0) {
      const std::string_view out = bytes_.substr(pos_ + e.head, e.size - e.head);
      pos_ += e.size;
      return out;
    }
  }
  auto h = read_kind(MsgpackKind::str);
  return h ? std::optional(h->payload) : std::nullopt;
}

std::optional<std::string_view> MsgpackReader::read_bin() {
  auto h = read_kind(MsgpackKind::bin);
  return h ? std::optional(h->payload) : std::nullopt;
}

std::optional<MsgpackExt> MsgpackReader::read_ext() {
  auto h = read_kind(MsgpackKind::ext);
  return h ? std::optional(MsgpackExt{h->ext_type, h->payload}) : std::nullopt;
}

std::optional<MsgpackInt> MsgpackReader::read_int() {
  if (!at_end()) {
    const auto b = static_cast<std::uint8_t>(bytes_[pos_]);
    if (b <= 0x7f) {
      ++pos_;
      return MsgpackInt{false, b};
    }
    if (b >= 0xe0) {
      ++pos_;
      return MsgpackInt{false, static_cast<std::int8_t>(b)};
    }
  }
  auto h = read_kind(MsgpackKind::integer);
  return h ? std::optional(h->integer) : std::nullopt;
}

std::optional<double> MsgpackReader::read_float() {
  auto h = read_kind(MsgpackKind::floating);
  return h ? std::optional(h->floating) : std::nullopt;
}

std::optional<bool> MsgpackReader::read_bool() {
  auto h = read_kind(MsgpackKind::boolean);
  return h ? std::optional(h->boolean) : std::nullopt;
}

bool MsgpackReader::read_nil() {
  return read_kind(MsgpackKind::nil).has_value();
}

// Iterative, so a hostile body cannot exhaust the stack: pending[d] counts the elements still
// to read in the container open at depth d.
std::optional<std::string_view> MsgpackReader::skip() {
  const std::size_t start = pos_;
  if (const std::size_t size = at_end() ? 0 : scalar_extent(bytes_, pos_).size; size > 0) {
    pos_ += size;
    return bytes_.substr(start, size);
  }
  std::uint64_t pending[kMaxDepth] = {};
  int depth = 0;
  do {
    const std::size_t at = pos_;
    if (const std::size_t size = depth > 0 && !at_end() ? scalar_extent(bytes_, pos_).size : 0;
        size > 0) {
      pos_ += size;
      while (depth > 0 && --pending[depth - 1] == 0) --depth;
      continue;
    }
    auto h = read_header();
    if (!h) break;
    if (is_container(h->kind)) {
      if (depth == kMaxDepth) {
        fail("nested deeper than " + std::to_string(kMaxDepth) + " levels", at);
        break;
      }
      const std::uint64_t n = h->kind == MsgpackKind::map ? 2ull * h->count : h->count;
      if (n > 0) {
        pending[depth++] = n;
        continue;
      }
    }
    while (depth > 0 && --pending[depth - 1] == 0) --depth;
  } while (depth > 0);
  if (depth > 0 || pos_ == start) {
    pos_ = start;
    return std::nullopt;
  }
  return bytes_.substr(start, pos_ - start);
}

std::string single_value_problem(std::string_view bytes) {
  if (bytes.empty()) return "it is empty";
  MsgpackReader reader(bytes);
  if (!reader.skip()) return std::string(reader.error());
  if (!reader.at_end()) {
    return std::to_string(reader.remaining()) + " unexpected bytes after the value" +
           at_byte(reader.offset());
  }
  return {};
}

}  // namespace jq::api
