#include "src/log/log.hpp"

#include <memory>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "src/log/event.hpp"
#include "src/log/json_escape.hpp"

namespace jq::log {
namespace {

// {"time":"...","level":"info","message":"..."}: messages are escaped, so any text is safe.
class JsonFormatter : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& out) override {
    time_.format(msg, out);
    const auto level = spdlog::level::to_string_view(msg.level);
    std::string_view payload(msg.payload.data(), msg.payload.size());
    std::string_view fields;  // already rendered by log::event
    if (auto mark = payload.find(kFieldsMark); mark != std::string_view::npos) {
      fields = payload.substr(mark + 1);
      payload = payload.substr(0, mark);
    }
    std::string rest = ",\"level\":";
    append_json_string(rest, std::string_view(level.data(), level.size()));
    rest += ",\"message\":";
    append_json_string(rest, payload);
    rest += fields;
    rest += "}\n";
    out.append(rest.data(), rest.data() + rest.size());
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>();
  }

 private:
  spdlog::pattern_formatter time_{"{\"time\":\"%Y-%m-%dT%H:%M:%S.%eZ\"",
                                  spdlog::pattern_time_type::utc, ""};
};

spdlog::level::level_enum to_spdlog(config::LogLevel level) {
  switch (level) {
    case config::LogLevel::trace:
      return spdlog::level::trace;
    case config::LogLevel::debug:
      return spdlog::level::debug;
    case config::LogLevel::info:
      return spdlog::level::info;
    case config::LogLevel::warn:
      return spdlog::level::warn;
    case config::LogLevel::error:
      return spdlog::level::err;
  }
  return spdlog::level::info;
}

}  // namespace

void setup(const config::Log& options) {
  render_fields_as_json(options.format == config::LogFormat::json);
  auto logger = std::make_shared<spdlog::logger>("jqmaster",
                                                 std::make_shared<spdlog::sinks::stderr_sink_mt>());
  if (options.format == config::LogFormat::json) {
    logger->set_formatter(std::make_unique<JsonFormatter>());
  } else {
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%-5l%$ %v");
  }
  logger->set_level(to_spdlog(options.level));
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(std::move(logger));
}

}  // namespace jq::log
