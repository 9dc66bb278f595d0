// Conversions between MessagePack bytes and nlohmann::json values (msgpack_to_json,
// json_to_msgpack from body.hpp).
//
// JSON bodies become MessagePack once, on arrival, so every decoder is written for MessagePack
// only. nlohmann's parser is iterative but its MessagePack writer recurses, so JSON text is
// first checked against the same nesting limit as MessagePack input.
#include <cmath>
#include <exception>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/base64.hpp"
#include "api/body.hpp"
#include "api/msgpack_reader.hpp"

namespace jq::api {

namespace {

using nlohmann::json;

json bin_object(std::string_view payload) {
  return json{{"$bin", base64_encode(payload)}};
}

std::string dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

json convert(MsgpackReader& reader);

json convert_int(const MsgpackInt& i) {
  if (i.above_int64) return json(i.as_unsigned());
  return json(i.value);
}

json convert_float(double d) {
  if (std::isnan(d) || std::isinf(d)) return nullptr;  // JSON has no NaN or infinity
  return json(d);
}

json convert_array(MsgpackReader& reader) {
  const std::uint32_t n = reader.read_array_header().value_or(0);
  json out = json::array();
  for (std::uint32_t i = 0; i < n; ++i) out.push_back(convert(reader));
  return out;
}

// A key that is not a string is written as its JSON text, cut to this many bytes. The cut keeps
// the work linear: a map used as a key of a map used as a key... would otherwise double its
// escaped text at every level (2^64 bytes at the nesting limit).
constexpr std::size_t kMaxKeyTextBytes = 256;

std::string key_text(const json& key) {
  std::string text = dump(key);
  if (text.size() <= kMaxKeyTextBytes) return text;
  std::size_t cut = kMaxKeyTextBytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // UTF-8
  text.resize(cut);
  return text + "...";
}

// Keys that are not strings use their JSON text: {1: "a"} becomes {"1": "a"}.
json convert_map(MsgpackReader& reader) {
  const std::uint32_t n = reader.read_map_header().value_or(0);
  json out = json::object();
  for (std::uint32_t i = 0; i < n; ++i) {
    const auto str_key = reader.read_str();
    std::string key = str_key ? std::string(*str_key) : key_text(convert(reader));
    out[std::move(key)] = convert(reader);
  }
  return out;
}

// The value at the cursor; the bytes were checked by single_value_problem() first, so the reads
// succeed and nesting is bounded by MsgpackReader::kMaxDepth.
json convert(MsgpackReader& reader) {
  switch (reader.peek()) {
    case MsgpackKind::boolean:
      return json(reader.read_bool().value_or(false));
    case MsgpackKind::integer:
      return convert_int(reader.read_int().value_or(MsgpackInt{}));
    case MsgpackKind::floating:
      return convert_float(reader.read_float().value_or(0));
    case MsgpackKind::str:
      return json(std::string(reader.read_str().value_or("")));
    case MsgpackKind::bin:
      return bin_object(reader.read_bin().value_or(""));
    case MsgpackKind::ext:
      return bin_object(reader.read_ext().value_or(MsgpackExt{}).data);
    case MsgpackKind::array:
      return convert_array(reader);
    case MsgpackKind::map:
      return convert_map(reader);
    case MsgpackKind::nil:
      reader.read_nil();
      return nullptr;
    case MsgpackKind::invalid:
      break;
  }
  return nullptr;
}

// Whether JSON text opens more than `limit` arrays/objects inside each other. Exact for valid
// JSON; invalid JSON is rejected by the parser either way.
bool json_nests_deeper_than(std::string_view text, int limit) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : text) {
    if (in_string) {
      in_string = escaped || c != '"';
      escaped = !escaped && c == '\\';
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

ApiError bad_json(std::string why) {
  return ApiError::make(ErrorCode::bad_request, "body is not valid JSON: " + std::move(why));
}

// Builds the value as nlohmann's own parser does, and stops it at what a MessagePack body could
// not hold either: a key repeated in one object (JSON parsers keep one of the two silently) and an
// integer outside the 64-bit range (nlohmann would turn it into a float, changing the value).
// It keeps the path to the value being read, so the refusal names the field (and a batch's index).
class CheckedSax {
 public:
  using Json = nlohmann::ordered_json;

  explicit CheckedSax(Json& root) : dom_(root, true) {}

  std::optional<ApiError> problem;

  bool null() { return element() && dom_.null(); }
  bool boolean(bool v) { return element() && dom_.boolean(v); }
  bool number_integer(Json::number_integer_t v) { return element() && dom_.number_integer(v); }
  bool number_unsigned(Json::number_unsigned_t v) { return element() && dom_.number_unsigned(v); }
  bool number_float(Json::number_float_t v, const Json::string_t& text) {
    if (!element()) return false;
    if (text.find_first_of(".eE") == std::string::npos) {
      return refuse(text +
                        " is an integer outside the 64-bit range (-9223372036854775808 to "
                        "18446744073709551615); send it as a string, or as a float (" +
                        json(v).dump() + ") if precision does not matter",
                    open_.size());
    }
    return dom_.number_float(v, text);
  }
  bool string(Json::string_t& v) { return element() && dom_.string(v); }
  bool binary(Json::binary_t& v) { return element() && dom_.binary(v); }
  bool start_object(std::size_t n) {
    if (!element()) return false;
    open_.emplace_back(true);
    return dom_.start_object(n);
  }
  bool key(Json::string_t& k) {
    Container& object = open_.back();
    object.key = k;
    if (!object.keys.insert(k).second) {
      return refuse("the key " + json(k).dump() + " appears twice in one object", open_.size() - 1);
    }
    return dom_.key(k);
  }
  bool end_object() {
    open_.pop_back();
    return dom_.end_object();
  }
  bool start_array(std::size_t n) {
    if (!element()) return false;
    open_.emplace_back(false);
    return dom_.start_array(n);
  }
  bool end_array() {
    open_.pop_back();
    return dom_.end_array();
  }
  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception& e) {
    return dom_.parse_error(position, last_token, e);  // throws: json_to_msgpack reports it
  }

 private:
  struct Container {
    explicit Container(bool object) : is_object(object) {}
    bool is_object = false;
    std::set<std::string> keys;    // objects: the keys seen so far
    std::string key;               // objects: the key whose value is being read
    std::size_t next_element = 0;  // arrays: how many elements have started
    std::size_t element = 0;       // arrays: the element being read
  };

  // A value starts: an array around it moves on to its next element.
  bool element() {
    if (!open_.empty() && !open_.back().is_object)
      open_.back().element = open_.back().next_element++;
    return true;
  }

  // Stops the parse with bad_request naming where it stopped: `field` is the key of the
  // outermost object (a job's field), `index` the position in a top-level array (a batch), and
  // the message carries the path through the `depth` outermost containers as a JSON Pointer.
  bool refuse(std::string why, std::size_t depth) {
    std::string pointer;
    std::optional<std::string> field;
    std::optional<std::size_t> index;
    if (!open_.empty() && !open_.front().is_object) index = open_.front().element;
    for (std::size_t i = 0; i < open_.size(); ++i) {
      const Container& c = open_[i];
      if (c.is_object && !field) field = c.key;
      if (i < depth) pointer += "/" + (c.is_object ? c.key : std::to_string(c.element));
    }
    ApiError e = bad_json(pointer.empty() ? why : "at " + pointer + ": " + why);
    e.field = std::move(field);
    e.index = index;
    problem = std::move(e);
    return false;
  }

  nlohmann::detail::json_sax_dom_parser<Json> dom_;
  std::vector<Container> open_;
};

// "[json.exception.parse_error.101] parse error at line 1, ..." -> "parse error at line 1, ...".
std::string without_exception_id(const char* what) {
  std::string_view text(what);
  if (text.starts_with("[json.exception.")) {
    const std::size_t end = text.find("] ");
    if (end != std::string_view::npos) text.remove_prefix(end + 2);
  }
  return std::string(text);
}

}  // namespace

Expected<nlohmann::json, ApiError> msgpack_to_json(std::string_view bytes) {
  const std::string problem = single_value_problem(bytes);
  if (!problem.empty()) {
    return unexpected(
        ApiError::make(ErrorCode::bad_request, "body is not valid MessagePack: " + problem));
  }
  try {
    MsgpackReader reader(bytes);
    return convert(reader);
  } catch (const std::exception& e) {  // allocation failure: nothing else throws here
    return unexpected(ApiError::make(ErrorCode::internal, e.what()));
  }
}

// ordered_json keeps the pusher's key order in the converted bytes.
Expected<std::string, ApiError> json_to_msgpack(std::string_view text) {
  if (json_nests_deeper_than(text, MsgpackReader::kMaxDepth)) {
    return unexpected(bad_json("it nests arrays/objects deeper than " +
                               std::to_string(MsgpackReader::kMaxDepth) + " levels"));
  }
  try {
    CheckedSax::Json value;
    CheckedSax sax(value);
    if (!CheckedSax::Json::sax_parse(text, &sax)) {
      return unexpected(sax.problem ? std::move(*sax.problem) : bad_json("it could not be read"));
    }
    std::string bytes;  // written straight into the string, not a vector copied out
    nlohmann::ordered_json::to_msgpack(value, nlohmann::detail::output_adapter<char>(bytes));
    return bytes;
  } catch (const nlohmann::json::exception& e) {
    return unexpected(bad_json(without_exception_id(e.what())));
  } catch (const std::exception& e) {
    return unexpected(ApiError::make(ErrorCode::internal, e.what()));
  }
}

}  // namespace jq::api
