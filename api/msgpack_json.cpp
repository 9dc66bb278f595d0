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

// Keys that are not strings use their JSON text: {1: "a"} becomes {"1": "a"}.
json convert_map(MsgpackReader& reader) {
  const std::uint32_t n = reader.read_map_header().value_or(0);
  json out = json::object();
  for (std::uint32_t i = 0; i < n; ++i) {
    const auto str_key = reader.read_str();
    std::string key = str_key ? std::string(*str_key) : dump(convert(reader));
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

// Watches the parser for a key repeated in one object. JSON parsers keep one of the two
// silently; a MessagePack body with a repeated key is rejected, and JSON should not differ.
struct DuplicateKeys {
  std::vector<std::set<std::string>> open_objects;  // keys seen, innermost object last
  std::optional<std::string> first_duplicate;

  bool on_event(nlohmann::ordered_json::parse_event_t event, const nlohmann::ordered_json& value) {
    using Event = nlohmann::ordered_json::parse_event_t;
    if (event == Event::object_start) {
      open_objects.emplace_back();
    } else if (event == Event::object_end && !open_objects.empty()) {
      open_objects.pop_back();
    } else if (event == Event::key && !open_objects.empty() && !first_duplicate &&
               !open_objects.back().insert(value.get<std::string>()).second) {
      first_duplicate = value.get<std::string>();
    }
    return true;  // keep every value
  }
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

ApiError bad_json(std::string why) {
  return ApiError::make(ErrorCode::bad_request, "body is not valid JSON: " + std::move(why));
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
    DuplicateKeys duplicates;
    const auto value =
        nlohmann::ordered_json::parse(text, [&duplicates](int, auto event, auto& parsed) {
          return duplicates.on_event(event, parsed);
        });
    if (duplicates.first_duplicate) {
      return unexpected(bad_json("the key " + nlohmann::json(*duplicates.first_duplicate).dump() +
                                 " appears twice in one object"));
    }
    const std::vector<std::uint8_t> bytes = nlohmann::ordered_json::to_msgpack(value);
    return std::string(bytes.begin(), bytes.end());
  } catch (const nlohmann::json::exception& e) {
    return unexpected(bad_json(without_exception_id(e.what())));
  } catch (const std::exception& e) {
    return unexpected(ApiError::make(ErrorCode::internal, e.what()));
  }
}

}  // namespace jq::api
