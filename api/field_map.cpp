#include "api/field_map.hpp"

#include "api/field_values.hpp"

namespace jq::api {

ApiError not_a_map_error(const FieldMapSpec& spec, std::string_view value) {
  return ApiError::make(ErrorCode::bad_request,
                        std::string(spec.what) + " must be a map, got " + describe_value(value));
}

ApiError key_not_string_error(std::string_view key) {
  return ApiError::make(ErrorCode::bad_request,
                        "field names must be strings, got " + describe_value(key));
}

ApiError unknown_field_error(const FieldMapSpec& spec, std::string_view key,
                             std::string_view key_msgpack, std::string_view allowed) {
  const std::string name = std::string(spec.field_prefix) + std::string(key);
  std::string where;  // " in rate" for the prefix "rate."
  if (!spec.field_prefix.empty()) {
    where = " in " + std::string(spec.field_prefix.substr(0, spec.field_prefix.size() - 1));
  }
  return field_error(name, "unknown field " + describe_value(key_msgpack) + where +
                               ": allowed fields are " + std::string(allowed));
}

ApiError duplicate_field_error(const FieldMapSpec& spec, std::string_view key) {
  const std::string name = std::string(spec.field_prefix) + std::string(key);
  return field_error(name, name + " appears more than once");
}

ApiError missing_field_error(const FieldMapSpec& spec, std::string_view key) {
  const std::string name = std::string(spec.field_prefix) + std::string(key);
  return field_error(name, name + " is required");
}

ApiError malformed_error(const MsgpackReader& reader) {
  return ApiError::make(ErrorCode::bad_request,
                        "body is not valid MessagePack: " + std::string(reader.error()));
}

}  // namespace jq::api
