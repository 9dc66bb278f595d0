// lua/registerWorker-3.lua: registers a worker endpoint, or updates its url's registration.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct RegisterWorker {
  static constexpr ScriptId id = ScriptId::register_worker;
  static constexpr std::array<std::string_view, 3> key_names = {"workers", "worker_urls",
                                                                "worker_seq"};
  static constexpr std::array<std::string_view, 3> arg_names = {"url", "registration", "channel"};
  static constexpr std::size_t args_per_item = 0;

  struct Keys {
    std::string workers, worker_urls, worker_seq;
  };
  struct Args {
    std::string url;
    std::string registration;  // JSON
    std::string channel;
  };
  struct Registered {
    std::string id;
    bool created = false;  // a new url (else an update)
  };

  static Keys keys(const redis::Keys& k) { return {k.workers(), k.worker_urls(), k.worker_seq()}; }
  static ScriptCall call(Keys k, Args a) {
    return {id,
            {std::move(k.workers), std::move(k.worker_urls), std::move(k.worker_seq)},
            {std::move(a.url), std::move(a.registration), std::move(a.channel)}};
  }
  static Decoded<Registered> decode(const Reply& reply) {
    const auto& e = reply.elements;
    if (!reply.is_array() || e.size() != 2 || e[0].type != Reply::Type::string ||
        !e[1].is_integer() || (e[1].integer != 0 && e[1].integer != 1)) {
      return unexpected(bad_reply(id, "not {id, created}", reply));
    }
    return Registered{e[0].str, e[1].integer == 1};
  }
};

}  // namespace jq::redis::bindings
