#include "src/log/event.hpp"

#include <atomic>
#include <cstdio>

#include "src/log/json_escape.hpp"

namespace jq::log {

namespace {
std::atomic<bool> json_fields{false};
}

void render_fields_as_json(bool json) {
  json_fields.store(json, std::memory_order_relaxed);
}

Field::Field(std::string_view k, double v) : key(k), quoted(false) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  text = buf;
}

void event(spdlog::level::level_enum level, std::string_view message,
           std::initializer_list<Field> fields) {
  if (!spdlog::should_log(level)) return;
  std::string payload(message);
  if (json_fields.load(std::memory_order_relaxed)) {
    // message, mark, then ,"key":value pairs the formatter appends inside the object.
    payload.push_back(kFieldsMark);
    for (const Field& f : fields) {
      payload += ',';
      append_json_string(payload, f.key);
      payload += ':';
      if (f.quoted) {
        append_json_string(payload, f.text);
      } else {
        payload += f.text;
      }
    }
  } else {
    for (const Field& f : fields) {
      payload += ' ';
      payload += f.key;
      payload += '=';
      if (f.quoted) {
        append_log_text(payload, f.text);
      } else {
        payload += f.text;
      }
    }
  }
  spdlog::log(level, "{}", payload);
}

}  // namespace jq::log
