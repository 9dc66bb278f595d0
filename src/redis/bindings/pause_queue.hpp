// lua/pauseQueue-1.lua: pauses or resumes the queue of a name and tells every master.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct PauseQueue {
  static constexpr ScriptId id = ScriptId::pause_queue;
  static constexpr std::array<std::string_view, 1> key_names = {"paused"};
  static constexpr std::array<std::string_view, 3> arg_names = {"name", "pause", "channel"};
  static constexpr std::size_t args_per_item = 0;

  struct Keys {
    std::string paused;
  };
  struct Args {
    std::string name;
    bool pause = true;  // false: resume
    std::string channel;
  };
  enum class Status : std::int64_t { unchanged = 0, changed = 1 };
  static constexpr std::array statuses = {Status::unchanged, Status::changed};

  static Keys keys(const redis::Keys& k) { return {k.paused()}; }
  static ScriptCall call(Keys k, Args a) {
    return {id, {std::move(k.paused)}, {std::move(a.name), arg(a.pause), std::move(a.channel)}};
  }
  static Decoded<Status> decode(const Reply& reply) { return integer_status(id, statuses, reply); }
};

}  // namespace jq::redis::bindings
