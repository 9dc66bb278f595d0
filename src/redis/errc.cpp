#include "src/redis/errc.hpp"

#include <string>

namespace jq::redis {
namespace {

class Category : public std::error_category {
 public:
  const char* name() const noexcept override { return "redis"; }
  std::string message(int value) const override {
    switch (static_cast<Errc>(value)) {
      case Errc::not_connected:
        return "not connected to Redis";
      case Errc::connection_lost:
        return "connection to Redis lost";
      case Errc::protocol_error:
        return "Redis sent a malformed reply";
      case Errc::timed_out:
        return "Redis did not answer in time";
      case Errc::shutting_down:
        return "Redis client is shutting down";
    }
    return "unknown Redis error";
  }
};

}  // namespace

const std::error_category& redis_category() {
  static const Category category;
  return category;
}

}  // namespace jq::redis
