// What the scripts that read one job by its field take (getJob): the shard's record
// buckets and the job's done key, and the field.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

template <ScriptId Id>
struct OneJobRead {
  static constexpr ScriptId id = Id;
  static constexpr std::array<std::string_view, 2> key_names = {"jobs", "done"};
  static constexpr std::array<std::string_view, 1> arg_names = {"field"};
  static constexpr std::size_t args_per_item = 0;

  struct Keys {
    std::string jobs, done;
  };
  struct Args {
    std::string field;
  };

  static Keys keys(const redis::Keys& k, int shard, std::string_view field) {
    return {k.jobs_prefix(shard), k.done(shard, field)};
  }
  static ScriptCall call(Keys k, Args a) {
    return {id, {std::move(k.jobs), std::move(k.done)}, {std::move(a.field)}};
  }
};

}  // namespace jq::redis::bindings
