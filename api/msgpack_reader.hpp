// A bounds-checked cursor over MessagePack bytes.
//
// Request bodies come from anyone, so this reader never trusts a length: every declared string,
// bin or ext length is checked against the bytes that are left, every container's element count
// against what could possibly follow (each element takes at least one byte), and nesting is
// limited to kMaxDepth containers. A failed read leaves the cursor where it was and records why
// in error(), so callers can try another type or report the problem.
//
// skip() walks one whole value without recursion and returns its exact bytes; that is how a
// job's argument is kept byte for byte, however it was encoded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace jq::api {

enum class MsgpackKind { nil, boolean, integer, floating, str, bin, array, map, ext, invalid };

std::string_view to_string(MsgpackKind kind);  // "nil", "boolean", "integer", ... for messages

// Any MessagePack integer, whatever its width and signedness on the wire.
struct MsgpackInt {
  bool above_int64 = false;  // an unsigned value above INT64_MAX, kept as its bits in `value`
  std::int64_t value = 0;

  bool in_range(std::int64_t lo, std::int64_t hi) const {
    return !above_int64 && value >= lo && value <= hi;
  }
  std::uint64_t as_unsigned() const { return static_cast<std::uint64_t>(value); }
};

struct MsgpackExt {
  std::int8_t type = 0;
  std::string_view data;
};

class MsgpackReader {
 public:
  static constexpr int kMaxDepth = 64;  // nested maps/arrays, counting the outermost

  explicit MsgpackReader(std::string_view bytes) : bytes_(bytes) {}
  // The reader only views its bytes: a temporary string would dangle.
  explicit MsgpackReader(std::string&&) = delete;

  // The kind of the next value without consuming it; invalid at the end or on a reserved byte.
  MsgpackKind peek() const;
  bool at_end() const { return pos_ == bytes_.size(); }
  std::size_t offset() const { return pos_; }
  std::size_t remaining() const { return bytes_.size() - pos_; }

  // Each reads one value of that kind, or fails (nullopt/false) without moving the cursor.
  // Container headers return the element count (a map's count is its number of pairs).
  std::optional<std::uint32_t> read_map_header();
  std::optional<std::uint32_t> read_array_header();
  std::optional<std::string_view> read_str();
  std::optional<std::string_view> read_bin();
  std::optional<MsgpackExt> read_ext();
  std::optional<MsgpackInt> read_int();
  std::optional<double> read_float();  // float 32 or 64; integers are not floats
  std::optional<bool> read_bool();
  bool read_nil();

  // Consumes one whole value (a container with everything inside it) and returns its bytes.
  std::optional<std::string_view> skip();

  // Why the last failed read failed ("truncated at byte 12", ...); empty before any failure.
  std::string_view error() const { return error_; }

 private:
  struct Header;
  std::optional<Header> read_header();
  std::optional<Header> read_kind(MsgpackKind want);
  bool read_typed_header(std::uint8_t b, Header& h, std::optional<std::uint64_t>& len);
  bool read_ext_type(Header& h);
  bool read_float32(Header& h);
  bool read_float64(Header& h);
  bool read_int_body(std::uint8_t b, Header& h);
  bool check_count(Header& h, std::uint64_t count, std::size_t start);
  bool read_payload(Header& h, std::uint64_t len);
  static bool assign(std::optional<std::uint64_t>& out, std::optional<std::uint64_t> in);
  template <class T>
  std::optional<T> read_be();
  std::optional<std::string_view> take(std::uint64_t n);
  bool fail(std::string why, std::size_t at);

  std::string_view bytes_;
  std::size_t pos_ = 0;
  std::string error_;
};

// Empty when `bytes` hold exactly one well-formed value and nothing after it; otherwise what is
// wrong, for a message ("truncated: ... at byte 3", "4 bytes after the value").
std::string single_value_problem(std::string_view bytes);

}  // namespace jq::api
