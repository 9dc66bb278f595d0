// Structured events: a message plus named fields (job id, name, attempt, endpoint, outcome,
// latency...). In JSON format the fields become keys of the line's object; in text format they
// follow the message as key=value.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include <spdlog/spdlog.h>

namespace jq::log {

struct Field {
  Field(std::string_view k, std::string_view v) : key(k), text(v), quoted(true) {}
  Field(std::string_view k, const std::string& v) : key(k), text(v), quoted(true) {}
  Field(std::string_view k, const char* v) : key(k), text(v), quoted(true) {}
  Field(std::string_view k, std::int64_t v) : key(k), text(std::to_string(v)), quoted(false) {}
  Field(std::string_view k, int v) : key(k), text(std::to_string(v)), quoted(false) {}
  Field(std::string_view k, double v);

  std::string_view key;
  std::string text;
  bool quoted;
};

void event(spdlog::level::level_enum level, std::string_view message,
           std::initializer_list<Field> fields);

// Set by log::setup: fields are rendered as JSON keys (json) or as key=value text.
void render_fields_as_json(bool json);

// Used by the JSON formatter: splits an event payload into its message and its rendered fields.
inline constexpr char kFieldsMark = '\x1f';

}  // namespace jq::log
