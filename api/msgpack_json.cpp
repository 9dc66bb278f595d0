// msgpack_to_json (body.hpp): MessagePack bytes as an nlohmann::json value, for JSON responses.
// The other way, json_to_msgpack, is api/json_to_msgpack.cpp.
#include <cmath>
#include <exception>
#include <string>

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

}  // namespace jq::api
