#include "src/log/log.hpp"

#include <memory>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace jq::log {
namespace {

void append_json_string(spdlog::memory_buf_t& out, std::string_view s) {
  out.push_back('"');
  for (char c : s) {
    switch (c) {
      case '"': out.append(std::string_view("\\\"")); break;
      case '\\': out.append(std::string_view("\\\\")); break;
      case '\n': out.append(std::string_view("\\n")); break;
      case '\r': out.append(std::string_view("\\r")); break;
      case '\t': out.append(std::string_view("\\t")); break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<int>(c));
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

// {"time":"...","level":"info","message":"..."}: messages are escaped, so any text is safe.
class JsonFormatter : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& out) override {
    time_.format(msg, out);
    out.append(std::string_view(",\"level\":"));
    const auto level = spdlog::level::to_string_view(msg.level);
    append_json_string(out, std::string_view(level.data(), level.size()));
    out.append(std::string_view(",\"message\":"));
    append_json_string(out, std::string_view(msg.payload.data(), msg.payload.size()));
    out.append(std::string_view("}\n"));
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
    case config::LogLevel::trace: return spdlog::level::trace;
    case config::LogLevel::debug: return spdlog::level::debug;
    case config::LogLevel::info: return spdlog::level::info;
    case config::LogLevel::warn: return spdlog::level::warn;
    case config::LogLevel::error: return spdlog::level::err;
  }
  return spdlog::level::info;
}

}  // namespace

void setup(const config::Log& options) {
  auto logger = std::make_shared<spdlog::logger>(
      "jqmaster", std::make_shared<spdlog::sinks::stderr_sink_mt>());
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
