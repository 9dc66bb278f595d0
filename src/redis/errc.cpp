#include "src/redis/errc.hpp"

#include <array>
#include <string>
#include <vector>

namespace jq::redis {
namespace {

struct Kind {
  Errc errc;
  std::string_view prefix;  // of the error reply; empty: not a reply (a connection failure)
  std::string_view name;    // error_kind()
  std::string_view message;
};

// Every Errc once, in enum order.
constexpr std::array kKinds = {
    Kind{Errc::not_connected, "", "not_connected", "not connected to Redis"},
    Kind{Errc::connection_lost, "", "connection_lost", "connection to Redis lost"},
    Kind{Errc::protocol_error, "", "protocol_error", "Redis sent a malformed reply"},
    Kind{Errc::timed_out, "", "timed_out", "Redis did not answer in time"},
    Kind{Errc::shutting_down, "", "", "Redis client is shutting down"},
    Kind{Errc::out_of_memory, "OOM", "oom",
         "Redis is out of memory: its used memory is above maxmemory"},
    Kind{Errc::loading, "LOADING", "loading", "Redis is loading its data set"},
    Kind{Errc::busy, "BUSY", "busy", "Redis is busy running a long script"},
    Kind{Errc::read_only, "READONLY", "read_only",
         "Redis is a read-only replica (after a failover?)"},
    Kind{Errc::master_down, "MASTERDOWN", "master_down", "Redis is a replica without its primary"},
    Kind{Errc::cannot_persist, "MISCONF", "cannot_persist",
         "Redis refuses writes because it cannot save to disk"},
    Kind{Errc::no_replicas, "NOREPLICAS", "no_replicas",
         "Redis refuses writes: too few replicas are connected"},
    Kind{Errc::cluster_down, "", "cluster_down",
         "Redis Cluster cannot serve the key's slot now (a failover or resharding, or its node "
         "is down)"},
    Kind{Errc::cross_slot, "", "cross_slot",
         "a script's keys are in different Redis Cluster hash slots"},
    Kind{Errc::not_replicated, "", "not_replicated",
         "fewer Redis replicas than redis.replicas_ack confirmed the write in time"},
    Kind{Errc::setup_refused, "", "setup_refused",
         "Redis refused the connection's set-up (AUTH, SELECT or the script library; the log "
         "says which): check redis.url's password and database, and the Redis user's rights"},
};

const Kind* kind_of(int value) {
  for (const Kind& k : kKinds) {
    if (static_cast<int>(k.errc) == value) return &k;
  }
  return nullptr;
}

class Category : public std::error_category {
 public:
  const char* name() const noexcept override { return "redis"; }
  std::string message(int value) const override {
    const Kind* k = kind_of(value);
    return k ? std::string(k->message) : "unknown Redis error";
  }
};

}  // namespace

const std::error_category& redis_category() {
  static const Category category;
  return category;
}

std::optional<Errc> refusal_of(std::string_view error_text) {
  const std::string_view word = error_text.substr(0, error_text.find(' '));
  for (const Kind& k : kKinds) {
    if (!k.prefix.empty() && word == k.prefix) return k.errc;
  }
  return std::nullopt;
}

std::string_view error_kind(const std::error_code& ec) {
  if (ec.category() != redis_category()) return {};
  const Kind* k = kind_of(ec.value());
  return k ? k->name : std::string_view();
}

std::span<const std::string_view> error_kinds() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    for (const Kind& k : kKinds) {
      if (!k.name.empty()) out.push_back(k.name);
    }
    return out;
  }();
  return names;
}

bool may_have_run(const std::error_code& error) {
  if (error.category() != redis_category()) return true;
  switch (static_cast<Errc>(error.value())) {
    case Errc::connection_lost:
    case Errc::protocol_error:
    case Errc::timed_out:
      return true;
    default:  // refused before it ran, or never sent
      return false;
  }
}

}  // namespace jq::redis
