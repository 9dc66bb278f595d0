// json_to_msgpack (body.hpp): JSON request bodies and worker answers become MessagePack once, on
// arrival, so every decoder is written for MessagePack only.
//
// One pass over the text, writing MessagePack as it reads, with no value tree in between: a
// container's header is written when it closes, in the byte kept for it (or, past 15 elements,
// in the bytes then inserted before its elements). It accepts exactly what nlohmann's parser
// accepts (RFC 8259, a UTF-8 byte-order mark at the start, strict UTF-8 in strings) and writes
// the bytes nlohmann's to_msgpack writes for it: the smallest form of each integer, strings and
// containers, and a float as float 32 when that holds it exactly. Beyond that it refuses what a
// MessagePack body could not hold either: a key repeated in one object (JSON parsers keep one of
// the two silently), an integer outside the 64-bit range (nlohmann would turn it into a float,
// changing the value), and nesting deeper than MsgpackReader::kMaxDepth. A refusal names the
// field (the path to it from the outermost object, as `rate.limit` or `match.argument[1].in[0]`)
// and, in a batch, the index.
// tests/fuzz/fuzz_json.cpp checks it against nlohmann's parser and to_msgpack.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <boost/container/small_vector.hpp>
#include <msgpack.hpp>

#include "api/body.hpp"
#include "api/msgpack_reader.hpp"
#include "common/string_sink.hpp"

namespace jq::api {
namespace {

// Keys of one object are compared one by one up to this many, then through a hash set.
constexpr std::size_t kLinearKeys = 16;

// Whether byte c stands for itself in a JSON string: printable ASCII other than '"' and '\\'.
constexpr bool plain_byte(unsigned char c) {
  return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

// The end of the run of plain bytes from `pos`. Eight bytes at a time: a job's argument is often
// one long run, and checking it byte by byte was a fifth of the master's instructions per job
// with 1 KiB arguments (callgrind, row b). Each test below is exact as a yes/no: some byte of v
// is below n (n <= 128) exactly when (v - n * 0x0101...) & ~v & 0x8080... is not 0.
std::size_t plain_run(std::string_view text, std::size_t pos) {
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
  constexpr std::uint64_t kHigh = 0x8080808080808080ULL;
  const auto has_below = [](std::uint64_t v, std::uint64_t n) {
    return (v - kOnes * n) & ~v & kHigh;
  };
  while (pos + 8 <= text.size()) {
    std::uint64_t v;
    std::memcpy(&v, text.data() + pos, sizeof v);
    if ((v & kHigh) | has_below(v, 0x20) | has_below(v ^ (kOnes * '"'), 1) |
        has_below(v ^ (kOnes * '\\'), 1)) {
      break;
    }
    pos += 8;
  }
  while (pos < text.size() && plain_byte(static_cast<unsigned char>(text[pos]))) ++pos;
  return pos;
}

class Transcoder {
 public:
  explicit Transcoder(std::string_view text) : text_(text) { out_.reserve(text.size()); }
  Transcoder(const Transcoder&) = delete;  // pk_ writes to this one's out_
  Transcoder& operator=(const Transcoder&) = delete;

  Expected<std::string, ApiError> run() {
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;  // a byte-order mark, as nlohmann skips
    skip_space();
    if (!value()) return unexpected(std::move(*problem_));
    skip_space();
    if (pos_ < text_.size()) {
      unexpected_here("the end after the value");
      return unexpected(std::move(*problem_));
    }
    return std::move(out_);
  }

 private:
  struct Frame {
    bool object = false;
    std::size_t header = 0;         // where the 1-byte header was kept in out_
    std::uint32_t count = 0;        // elements (arrays) or members (objects) so far
    std::size_t key = 0, size = 0;  // objects: the current key's bytes in out_
    std::size_t first_key = 0;      // objects: its first key in keys_
    // Objects past kLinearKeys keys: all of them (made then: a set is not free to make).
    std::unique_ptr<std::unordered_set<std::string>> many;
  };

  std::string_view text_;
  std::size_t pos_ = 0;
  std::string out_;
  StringSink sink_{out_};
  msgpack::packer<StringSink> pk_{sink_};  // integers, strings and headers, smallest form
  // The open containers, and the keys of the open objects in out_. Inline for the usual body (a
  // few levels, a dozen keys): growing them from nothing was five allocations per body
  // (callgrind, row b).
  boost::container::small_vector<Frame, 4> open_;
  boost::container::small_vector<std::pair<std::size_t, std::size_t>, 16> keys_;
  std::string scratch_;  // a string with escapes, decoded
  std::optional<ApiError> problem_;

  // --- reading --------------------------------------------------------------------------

  void skip_space() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
      ++pos_;
    }
  }

  bool value() {
    if (pos_ >= text_.size()) return unexpected_here("a value");
    element_starts();
    switch (text_[pos_]) {
      case '{':
        return object();
      case '[':
        return array();
      case '"':
        return string_value();
      case 't':
        return literal("true", '\xc3');
      case 'f':
        return literal("false", '\xc2');
      case 'n':
        return literal("null", '\xc0');
      default:
        if (text_[pos_] == '-' || (text_[pos_] >= '0' && text_[pos_] <= '9')) return number();
        return unexpected_here("a value");
    }
  }

  bool literal(std::string_view word, char byte) {
    if (text_.substr(pos_, word.size()) != word) return syntax("invalid literal");
    pos_ += word.size();
    out_.push_back(byte);
    return true;
  }

  bool open(bool object) {
    if (open_.size() >= static_cast<std::size_t>(MsgpackReader::kMaxDepth)) {
      problem_ = bad_json("it nests arrays/objects deeper than " +
                          std::to_string(MsgpackReader::kMaxDepth) + " levels");
      return false;
    }
    ++pos_;
    Frame& f = open_.emplace_back();
    f.object = object;
    f.header = out_.size();
    f.first_key = keys_.size();
    out_.push_back('\0');
    return true;
  }

  // Writes the header of the container that closes in the byte kept for it (with the bytes a
  // longer header needs inserted there).
  void close() {
    Frame& f = open_.back();
    if (f.count <= 15) {  // fixmap or fixarray: the kept byte holds it
      out_[f.header] = static_cast<char>((f.object ? 0x80 : 0x90) | f.count);
    } else {
      std::string header;
      StringSink sink{header};
      msgpack::packer<StringSink> pk(sink);
      if (f.object) {
        pk.pack_map(f.count);
      } else {
        pk.pack_array(f.count);
      }
      out_.replace(f.header, 1, header);
    }
    keys_.resize(f.first_key);
    open_.pop_back();
    ++pos_;
  }

  bool array() {
    return open(false) && elements(']', [this] { return value(); });
  }

  bool object() {
    return open(true) && elements('}', [this] { return member(); });
  }

  // The elements of the container just opened, each read by `element`, up to `end`; then its
  // header.
  template <class Element>
  bool elements(char end, Element element) {
    skip_space();
    if (!at(end)) {
      for (;;) {
        skip_space();
        if (!element()) return false;
        skip_space();
        if (at(end)) break;
        if (!at(',')) return unexpected_here(std::string("',' or '") + end + "'");
        ++pos_;
      }
    }
    close();
    return true;
  }

  // "key": value
  bool member() {
    if (!at('"')) return unexpected_here("a key (a string)");
    const std::size_t key_at = out_.size();
    if (!string_value() || !member_key(key_at)) return false;
    skip_space();
    if (!expect(':', "':'")) return false;
    skip_space();
    return value();
  }

  bool at(char c) const { return pos_ < text_.size() && text_[pos_] == c; }

  bool expect(char c, std::string_view what) {
    if (!at(c)) return unexpected_here(what);
    ++pos_;
    return true;
  }

  bool unexpected_here(std::string_view what) {
    if (pos_ >= text_.size()) {
      return syntax(std::string("unexpected end of input; expected ").append(what));
    }
    return syntax("unexpected '" + shown(text_[pos_]) + "'; expected " + std::string(what));
  }

  // The key just written at key_at (a MessagePack str): the object's current key, refused when
  // the object already has it.
  bool member_key(std::size_t key_at) {
    const std::size_t header = str_header_size(static_cast<unsigned char>(out_[key_at]));
    Frame& f = open_.back();
    f.key = key_at + header;
    f.size = out_.size() - f.key;
    const std::string_view key(out_.data() + f.key, f.size);
    ++f.count;
    bool repeated = false;
    if (f.count <= kLinearKeys) {
      for (std::size_t i = f.first_key; i < keys_.size() && !repeated; ++i) {
        repeated = std::string_view(out_.data() + keys_[i].first, keys_[i].second) == key;
      }
      keys_.emplace_back(f.key, f.size);
      if (f.count == kLinearKeys && !repeated) {
        f.many = std::make_unique<std::unordered_set<std::string>>();
        for (std::size_t i = f.first_key; i < keys_.size(); ++i) {
          f.many->emplace(out_.data() + keys_[i].first, keys_[i].second);
        }
      }
    } else {
      repeated = !f.many->emplace(key).second;
    }
    if (repeated) {
      return refuse(
          "the key " + nlohmann::json(std::string(key)).dump() + " appears twice in one object",
          open_.size() - 1);
    }
    return true;
  }

  static std::size_t str_header_size(unsigned char first) {
    if ((first & 0xE0) == 0xA0) return 1;
    if (first == 0xD9) return 2;
    if (first == 0xDA) return 3;
    return 5;
  }

  // A string at pos_ (its opening quote), written as a MessagePack str.
  bool string_value() {
    const std::size_t start = ++pos_;
    bool escaped = false;
    // The usual string: no escape, so its bytes are written as they are, once checked.
    for (;;) {
      pos_ = plain_run(text_, pos_);
      if (pos_ >= text_.size()) return syntax("unexpected end of input in a string");
      const auto c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') break;
      if (c == '\\') {
        escaped = true;
        break;
      }
      if (c < 0x20) return control_character(c);
      if (!utf8_character()) return false;
    }
    if (!escaped) {
      put_str(text_.substr(start, pos_ - start));
      ++pos_;
      return true;
    }
    scratch_.assign(text_.substr(start, pos_ - start));
    for (;;) {
      const std::size_t run_end = plain_run(text_, pos_);
      scratch_.append(text_.substr(pos_, run_end - pos_));
      pos_ = run_end;
      if (pos_ >= text_.size()) return syntax("unexpected end of input in a string");
      const auto c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') break;
      if (c == '\\') {
        if (!escape()) return false;
      } else if (c < 0x20) {
        return control_character(c);
      } else {
        const std::size_t from = pos_;
        if (!utf8_character()) return false;
        scratch_.append(text_.substr(from, pos_ - from));
      }
    }
    put_str(scratch_);
    ++pos_;
    return true;
  }

  bool control_character(unsigned char c) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string code = "U+00";
    code += kHex[c >> 4];
    code += kHex[c & 0xF];
    return syntax("control character " + code + " must be escaped in a string");
  }

  // One UTF-8 character of two to four bytes at pos_, as RFC 3629 allows it (no overlong form,
  // no surrogate, nothing past U+10FFFF).
  bool utf8_character() {
    const auto b = [&](std::size_t i) {
      return pos_ + i < text_.size() ? static_cast<unsigned char>(text_[pos_ + i]) : 0;
    };
    const auto in = [](unsigned char x, unsigned lo, unsigned hi) { return x >= lo && x <= hi; };
    const unsigned char c = b(0);
    std::size_t n = 0;
    if (in(c, 0xC2, 0xDF)) {
      n = in(b(1), 0x80, 0xBF) ? 2 : 0;
    } else if (c == 0xE0) {
      n = in(b(1), 0xA0, 0xBF) && in(b(2), 0x80, 0xBF) ? 3 : 0;
    } else if (in(c, 0xE1, 0xEC) || in(c, 0xEE, 0xEF)) {
      n = in(b(1), 0x80, 0xBF) && in(b(2), 0x80, 0xBF) ? 3 : 0;
    } else if (c == 0xED) {
      n = in(b(1), 0x80, 0x9F) && in(b(2), 0x80, 0xBF) ? 3 : 0;
    } else if (c == 0xF0) {
      n = in(b(1), 0x90, 0xBF) && in(b(2), 0x80, 0xBF) && in(b(3), 0x80, 0xBF) ? 4 : 0;
    } else if (in(c, 0xF1, 0xF3)) {
      n = in(b(1), 0x80, 0xBF) && in(b(2), 0x80, 0xBF) && in(b(3), 0x80, 0xBF) ? 4 : 0;
    } else if (c == 0xF4) {
      n = in(b(1), 0x80, 0x8F) && in(b(2), 0x80, 0xBF) && in(b(3), 0x80, 0xBF) ? 4 : 0;
    }
    if (n == 0) return syntax("invalid UTF-8 in a string");
    pos_ += n;
    return true;
  }

  // An escape at pos_ (its backslash), decoded into scratch_.
  bool escape() {
    if (pos_ + 1 >= text_.size()) return syntax("unexpected end of input in a string");
    const char e = text_[pos_ + 1];
    pos_ += 2;
    static constexpr std::string_view kEscaped = "\"\\/bfnrt", kMeant = "\"\\/\b\f\n\r\t";
    if (const std::size_t i = kEscaped.find(e); i != std::string_view::npos) {
      scratch_.push_back(kMeant[i]);
      return true;
    }
    if (e != 'u') {
      pos_ -= 1;
      return syntax("invalid escape '\\" + shown(e) + "' in a string");
    }
    std::uint32_t code = 0;
    if (!hex4(code)) return false;
    if (code >= 0xDC00 && code <= 0xDFFF) {
      return syntax("invalid string: surrogate U+DC00..U+DFFF must follow U+D800..U+DBFF");
    }
    if (code >= 0xD800 && code <= 0xDBFF) {
      std::uint32_t low = 0;
      if (text_.substr(pos_, 2) != "\\u" || (pos_ += 2, !hex4(low)) || low < 0xDC00 ||
          low > 0xDFFF) {
        return syntax(
            "invalid string: surrogate U+D800..U+DBFF must be followed by "
            "U+DC00..U+DFFF");
      }
      code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
    }
    put_utf8(code);
    return true;
  }

  bool hex4(std::uint32_t& code) {
    if (pos_ + 4 > text_.size()) return syntax("unexpected end of input in a \\u escape");
    for (int i = 0; i < 4; ++i) {
      const char h = text_[pos_ + i];
      std::uint32_t digit = 0;
      if (h >= '0' && h <= '9') {
        digit = static_cast<std::uint32_t>(h - '0');
      } else if (h >= 'a' && h <= 'f') {
        digit = static_cast<std::uint32_t>(h - 'a' + 10);
      } else if (h >= 'A' && h <= 'F') {
        digit = static_cast<std::uint32_t>(h - 'A' + 10);
      } else {
        return syntax("'\\u' must be followed by 4 hex digits");
      }
      code = code * 16 + digit;
    }
    pos_ += 4;
    return true;
  }

  void put_utf8(std::uint32_t code) {
    if (code < 0x80) {
      scratch_.push_back(static_cast<char>(code));
    } else if (code < 0x800) {
      scratch_.push_back(static_cast<char>(0xC0 | (code >> 6)));
      scratch_.push_back(static_cast<char>(0x80 | (code & 0x3F)));
    } else if (code < 0x10000) {
      scratch_.push_back(static_cast<char>(0xE0 | (code >> 12)));
      scratch_.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
      scratch_.push_back(static_cast<char>(0x80 | (code & 0x3F)));
    } else {
      scratch_.push_back(static_cast<char>(0xF0 | (code >> 18)));
      scratch_.push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3F)));
      scratch_.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
      scratch_.push_back(static_cast<char>(0x80 | (code & 0x3F)));
    }
  }

  // A number as an error message shows it: a long one by its first digits and its length (a
  // 400-digit literal repeated whole buries the message).
  static std::string shown_number(std::string_view token) {
    constexpr std::size_t kShown = 24;
    if (token.size() <= kShown + 8) return std::string(token);
    return std::string(token.substr(0, kShown)) + "... (" + std::to_string(token.size()) +
           " characters)";
  }

  // A number at pos_, by RFC 8259's grammar: an integer without fraction or exponent, else a
  // float (strtod, as nlohmann reads it).
  bool number() {
    const std::size_t start = pos_;
    const bool negative = text_[pos_] == '-';
    if (negative) ++pos_;
    const auto digit = [&] {
      return pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9';
    };
    if (!digit()) return syntax("invalid number; expected a digit after '-'");
    if (text_[pos_] == '0') {
      ++pos_;
    } else {
      while (digit()) ++pos_;
    }
    bool integer = true;
    if (pos_ < text_.size() && text_[pos_] == '.') {
      integer = false;
      ++pos_;
      if (!digit()) return syntax("invalid number; expected a digit after '.'");
      while (digit()) ++pos_;
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      integer = false;
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      if (!digit()) return syntax("invalid number; expected a digit in the exponent");
      while (digit()) ++pos_;
    }
    const std::string_view token = text_.substr(start, pos_ - start);
    if (integer && put_integer(token, negative)) return true;
    // A float (or an integer too large for 64 bits, which is refused below).
    const std::string copy(token);
    const double v = std::strtod(copy.c_str(), nullptr);
    if (integer) {
      std::string message = shown_number(token) +
                            " is an integer outside the 64-bit range (-9223372036854775808 to "
                            "18446744073709551615); send it as a string";
      // Past about 1.8e308 it is no float either.
      if (std::isfinite(v)) {
        message +=
            ", or as a float (" + nlohmann::json(v).dump() + ") if precision does not matter";
      }
      return refuse(std::move(message), open_.size());
    }
    if (!std::isfinite(v)) {
      return refuse(
          shown_number(token) + " is outside the range of a 64-bit float (about ±1.8e308)",
          open_.size());
    }
    put_float(v);
    return true;
  }

  // An integer token that fits in 64 bits (int64 when negative, uint64 otherwise), written in
  // its smallest form; false when it does not fit.
  bool put_integer(std::string_view token, bool negative) {
    std::uint64_t magnitude = 0;
    for (std::size_t i = negative ? 1 : 0; i < token.size(); ++i) {
      const auto d = static_cast<std::uint64_t>(token[i] - '0');
      if (magnitude > (std::numeric_limits<std::uint64_t>::max() - d) / 10) return false;
      magnitude = magnitude * 10 + d;
    }
    if (!negative) {
      pk_.pack_uint64(magnitude);
    } else if (magnitude <= std::uint64_t{1} << 63) {
      pk_.pack_int64(static_cast<std::int64_t>(0 - magnitude));  // -0 is the integer 0
    } else {
      return false;
    }
    return true;
  }

  // float 32 when it holds the value exactly (as nlohmann writes it), else float 64; not
  // msgpack-cxx's pack_float or pack_double, which write a whole number as an integer.
  void put_float(double v) {
    const bool in_range = v >= static_cast<double>(std::numeric_limits<float>::lowest()) &&
                          v <= static_cast<double>(std::numeric_limits<float>::max());
    const bool as_float = in_range && static_cast<double>(static_cast<float>(v)) == v;
    const std::uint64_t bits = as_float ? std::bit_cast<std::uint32_t>(static_cast<float>(v))
                                        : std::bit_cast<std::uint64_t>(v);
    const int bytes = as_float ? 4 : 8;
    out_.push_back(as_float ? '\xca' : '\xcb');
    for (int i = bytes - 1; i >= 0; --i) out_.push_back(static_cast<char>(bits >> (8 * i)));
  }

  void put_str(std::string_view s) {
    pk_.pack_str(static_cast<std::uint32_t>(s.size()));
    pk_.pack_str_body(s.data(), static_cast<std::uint32_t>(s.size()));
  }

  // --- where a value is, for refusals ------------------------------------------------------

  // A value starts: in an array, it is the next element.
  void element_starts() {
    if (!open_.empty() && !open_.back().object) ++open_.back().count;
  }

  static std::string shown(char c) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7F) return std::string(1, c);
    static constexpr char kHex[] = "0123456789ABCDEF";
    return std::string("\\x") + kHex[u >> 4] + kHex[u & 0xF];
  }

  static ApiError bad_json(std::string why) {
    return ApiError::make(ErrorCode::bad_request, "body is not valid JSON: " + std::move(why));
  }

  // A text that is not JSON: where it stopped (line and column, from 1).
  bool syntax(const std::string& why) {
    std::size_t line = 1, column = 1;
    for (std::size_t i = 0; i < pos_ && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    problem_ = bad_json("parse error at line " + std::to_string(line) + ", column " +
                        std::to_string(column) + ": " + why);
    return false;
  }

  std::string key_of(const Frame& f) const { return std::string(out_.data() + f.key, f.size); }

  // JSON that MessagePack could not hold: bad_request naming where, `index` the position in a
  // top-level array (a batch), `field` the path through the `depth` outermost containers from
  // the outermost object on (keys joined by '.', array positions as [i]; at least the outermost
  // object's key), and the message that path as a JSON Pointer.
  bool refuse(const std::string& why, std::size_t depth) {
    std::string pointer;
    std::optional<std::string> field;
    std::optional<std::size_t> index;
    if (!open_.empty() && !open_.front().object) index = open_.front().count - 1;
    for (std::size_t i = 0; i < open_.size(); ++i) {
      const Frame& f = open_[i];
      if (field && i < depth) {
        *field += f.object ? "." + key_of(f) : "[" + std::to_string(f.count - 1) + "]";
      } else if (f.object && !field) {
        field = key_of(f);
      }
      if (i < depth) pointer += "/" + (f.object ? key_of(f) : std::to_string(f.count - 1));
    }
    ApiError e = bad_json(pointer.empty() ? why : "at " + pointer + ": " + why);
    e.field = std::move(field);
    e.index = index;
    problem_ = std::move(e);
    return false;
  }
};

}  // namespace

Expected<std::string, ApiError> json_to_msgpack(std::string_view text) {
  try {
    return Transcoder(text).run();
  } catch (const std::exception& e) {  // allocation failure: nothing else throws here
    return unexpected(ApiError::make(ErrorCode::internal, e.what()));
  }
}

}  // namespace jq::api
