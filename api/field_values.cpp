#include "api/field_values.hpp"

#include <cmath>

#include "api/body.hpp"
#include "api/msgpack_reader.hpp"

namespace jq::api {

namespace {

constexpr std::size_t kMaxDescribedBytes = 60;

// Cuts at most `max` bytes without splitting a UTF-8 sequence.
std::string shortened(std::string text, std::size_t max) {
  if (text.size() <= max) return text;
  std::size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) --cut;
  text.resize(cut);
  return text + "...";
}

std::string describe_float(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  return nlohmann::json(d).dump();
}

// 86400 -> "86400", 0.5 -> "0.5".
std::string format_number(double d) {
  if (d == std::floor(d) && std::abs(d) < 1e15) return std::to_string(static_cast<std::int64_t>(d));
  return nlohmann::json(d).dump();
}

// An integer or float as a double; NaN for anything else.
double number_value(std::string_view value) {
  MsgpackReader reader(value);
  if (auto i = reader.read_int()) {
    return i->above_int64 ? static_cast<double>(i->as_unsigned()) : static_cast<double>(i->value);
  }
  if (auto d = reader.read_float()) return *d;
  return NAN;
}

}  // namespace

std::string describe_value(std::string_view msgpack_value) {
  MsgpackReader reader(msgpack_value);
  if (auto d = reader.read_float()) return describe_float(*d);
  if (auto bin = reader.read_bin())
    return "binary data (" + std::to_string(bin->size()) + " bytes)";
  if (auto ext = reader.read_ext()) {
    return "an ext value (type " + std::to_string(ext->type) + ", " +
           std::to_string(ext->data.size()) + " bytes)";
  }
  auto json = msgpack_to_json(msgpack_value);
  if (!json) return "an invalid value";
  return shortened(json->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                   kMaxDescribedBytes);
}

ApiError field_error(std::string_view field, std::string message) {
  ApiError error = ApiError::make(ErrorCode::invalid_job, std::move(message));
  error.field = std::string(field);
  return error;
}

Expected<std::int64_t, ApiError> read_int_field(std::string_view field, std::string_view value,
                                                std::int64_t lo, std::int64_t hi) {
  MsgpackReader reader(value);
  const auto i = reader.read_int();
  if (i && i->in_range(lo, hi)) return i->value;
  return unexpected(field_error(field, std::string(field) + " must be an integer between " +
                                           std::to_string(lo) + " and " + std::to_string(hi) +
                                           ", got " + describe_value(value)));
}

Expected<bool, ApiError> read_bool_field(std::string_view field, std::string_view value) {
  MsgpackReader reader(value);
  if (auto b = reader.read_bool()) return *b;
  return unexpected(field_error(
      field, std::string(field) + " must be true or false, got " + describe_value(value)));
}

Expected<std::string_view, ApiError> read_string_field(std::string_view field,
                                                       std::string_view value) {
  MsgpackReader reader(value);
  if (auto s = reader.read_str()) return *s;
  return unexpected(
      field_error(field, std::string(field) + " must be a string, got " + describe_value(value)));
}

Expected<std::chrono::milliseconds, ApiError> read_seconds_field(std::string_view field,
                                                                 std::string_view value,
                                                                 double max_seconds) {
  const double seconds = number_value(value);
  if (!(seconds > 0 && seconds <= max_seconds)) {  // also rejects NaN and non-numbers
    return unexpected(field_error(field, std::string(field) +
                                             " must be a number of seconds greater than 0 and at "
                                             "most " +
                                             format_number(max_seconds) + ", got " +
                                             describe_value(value)));
  }
  return milliseconds_from_seconds(seconds);
}

Expected<std::chrono::milliseconds, ApiError> read_seconds_or_zero_field(std::string_view field,
                                                                         std::string_view value,
                                                                         double max_seconds) {
  const double seconds = number_value(value);
  if (!(seconds >= 0 && seconds <= max_seconds)) {  // also rejects NaN and non-numbers
    return unexpected(
        field_error(field, std::string(field) + " must be a number of seconds from 0 to " +
                               format_number(max_seconds) + ", got " + describe_value(value)));
  }
  if (seconds == 0) return std::chrono::milliseconds(0);
  return milliseconds_from_seconds(seconds);
}

std::chrono::milliseconds milliseconds_from_seconds(double seconds) {
  const std::int64_t micros = std::llround(seconds * 1e6);
  const std::int64_t millis = std::max<std::int64_t>(1, (micros + 999) / 1000);
  return std::chrono::milliseconds(millis);
}

}  // namespace jq::api
