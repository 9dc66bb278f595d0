// Response bodies: one nlohmann::json tree, written as MessagePack by walking it here (so
// raw_msgpack() values can be spliced in verbatim) or as compact JSON.
#include "api/body.hpp"

#include <bit>
#include <cstdint>

#include <msgpack.hpp>

#include "api/base64.hpp"
#include "common/string_sink.hpp"

namespace jq::api {

namespace {

using nlohmann::json;

using Packer = msgpack::packer<StringSink>;

bool is_raw(const json::binary_t& bin) {
  return bin.has_subtype() && bin.subtype() == kRawMsgpackSubtype;
}

std::string_view bytes_of(const json::binary_t& bin) {
  return {reinterpret_cast<const char*>(bin.data()), bin.size()};
}

void pack(Packer& pk, StringSink& out, const json& value);

// Always float 64: msgpack-cxx's pack_double writes whole numbers such as 3.0 as integers,
// which would change the value's type.
void pack_float64(StringSink& out, double d) {
  const auto bits = std::bit_cast<std::uint64_t>(d);
  char bytes[9] = {static_cast<char>(0xcb)};
  for (int i = 0; i < 8; ++i) bytes[1 + i] = static_cast<char>(bits >> (56 - 8 * i));
  out.write(bytes, sizeof bytes);
}

void pack_string(Packer& pk, const std::string& s) {
  pk.pack_str(static_cast<std::uint32_t>(s.size()));
  pk.pack_str_body(s.data(), static_cast<std::uint32_t>(s.size()));
}

void pack_binary(Packer& pk, StringSink& out, const json::binary_t& bin) {
  const std::string_view bytes = bytes_of(bin);
  if (is_raw(bin)) {
    out.write(bytes.data(), bytes.size());
    return;
  }
  pk.pack_bin(static_cast<std::uint32_t>(bytes.size()));
  pk.pack_bin_body(bytes.data(), static_cast<std::uint32_t>(bytes.size()));
}

void pack_object(Packer& pk, StringSink& out, const json& value) {
  pk.pack_map(static_cast<std::uint32_t>(value.size()));
  for (const auto& [key, item] : value.items()) {
    pack_string(pk, key);
    pack(pk, out, item);
  }
}

void pack(Packer& pk, StringSink& out, const json& value) {
  switch (value.type()) {
    case json::value_t::boolean:
      value.get<bool>() ? pk.pack_true() : pk.pack_false();
      return;
    case json::value_t::number_integer:
      pk.pack_int64(value.get<std::int64_t>());
      return;
    case json::value_t::number_unsigned:
      pk.pack_uint64(value.get<std::uint64_t>());
      return;
    case json::value_t::number_float:
      pack_float64(out, value.get<double>());
      return;
    case json::value_t::string:
      pack_string(pk, value.get_ref<const std::string&>());
      return;
    case json::value_t::binary:
      pack_binary(pk, out, value.get_binary());
      return;
    case json::value_t::array:
      pk.pack_array(static_cast<std::uint32_t>(value.size()));
      for (const auto& item : value) pack(pk, out, item);
      return;
    case json::value_t::object:
      pack_object(pk, out, value);
      return;
    case json::value_t::null:
    case json::value_t::discarded:
      break;
  }
  pk.pack_nil();
}

// A copy of `value` that JSON can express: raw MessagePack converted, other binaries as $bin.
json jsonable(const json& value) {
  if (value.is_binary()) {
    const auto& bin = value.get_binary();
    if (!is_raw(bin)) return json{{"$bin", base64_encode(bytes_of(bin))}};
    auto converted = msgpack_to_json(bytes_of(bin));
    return converted ? std::move(*converted) : json(nullptr);
  }
  if (value.is_array()) {
    json out = json::array();
    for (const auto& item : value) out.push_back(jsonable(item));
    return out;
  }
  if (value.is_object()) {
    json out = json::object();
    for (const auto& [key, item] : value.items()) out[key] = jsonable(item);
    return out;
  }
  return value;
}

}  // namespace

nlohmann::json raw_msgpack(std::string bytes) {
  return json::binary(json::binary_t::container_type(bytes.begin(), bytes.end()),
                      kRawMsgpackSubtype);
}

// Allocation failure is the only thing that throws below; like everywhere else in the daemon it
// is not recovered from.
std::string encode_body(const nlohmann::json& value, MediaType type) {
  if (type == MediaType::json) {
    return jsonable(value).dump(-1, ' ', false, json::error_handler_t::replace);
  }
  std::string body;
  StringSink out{body};
  Packer pk(out);
  pack(pk, out, value);
  return body;
}

std::string encode_push_answer(std::string_view id, bool duplicate, bool merged, MediaType type) {
  std::string body;
  if (type == MediaType::json) {
    body.reserve(32 + id.size());
    body.append(duplicate ? "{\"duplicate\":true,\"id\":\"" : "{\"id\":\"").append(id).append("\"");
    body.append(merged ? ",\"merged\":true}" : "}");
    return body;
  }
  StringSink out{body};
  Packer pk(out);
  pk.pack_map(1 + (duplicate ? 1 : 0) + (merged ? 1 : 0));
  if (duplicate) pk.pack("duplicate").pack_true();
  pk.pack("id");
  pk.pack_str(static_cast<std::uint32_t>(id.size()));
  pk.pack_str_body(id.data(), static_cast<std::uint32_t>(id.size()));
  if (merged) pk.pack("merged").pack_true();
  return body;
}

std::string encode_error(const ApiError& error, MediaType type) {
  json body = {{"error", to_string(error.code)}, {"message", error.message}};
  if (error.field) body["field"] = *error.field;
  if (error.index) body["index"] = *error.index;
  return encode_body(body, type);
}

}  // namespace jq::api
