// lua/findReserved-2.lua: the running jobs reservations took, found by their tokens, a page of
// the shard's inflight zset at a time.
#pragma once

#include "src/redis/bindings/binding.hpp"
#include "src/redis/keys.hpp"

namespace jq::redis::bindings {

struct FindReserved {
  static constexpr ScriptId id = ScriptId::find_reserved;
  static constexpr std::array<std::string_view, 2> key_names = {"jobs", "inflight"};
  static constexpr std::array<std::string_view, 3> arg_names = {"now_ms", "cursor", "count"};
  static constexpr std::size_t args_per_item = 1;  // one per reservation: its token

  struct Keys {
    std::string jobs, inflight;
  };
  struct Args {
    std::int64_t now_ms = 0;  // the earliest of the reservations': deadlines are not before it
    std::string cursor = "0";
    std::int64_t count = 0;
    std::vector<std::string> tokens{};
  };
  struct Found {
    std::string field;
    std::string record;  // MessagePack, as stored
  };
  struct Page {
    std::string cursor;  // "0": the scan is done
    std::vector<Found> jobs;
  };

  static Keys keys(const redis::Keys& k, int shard) {
    return {k.jobs_prefix(shard), k.inflight(shard)};
  }
  static ScriptCall call(Keys k, Args a) {
    ScriptCall c{id,
                 {std::move(k.jobs), std::move(k.inflight)},
                 {arg(a.now_ms), std::move(a.cursor), arg(a.count)}};
    for (std::string& token : a.tokens) c.args.push_back(std::move(token));
    return c;
  }
  static Decoded<Page> decode(Reply reply) {
    auto& e = reply.elements;
    if (!reply.is_array() || e.empty() || e.size() % 2 != 1 || e[0].type != Reply::Type::string) {
      return unexpected(bad_reply(id, "not {cursor, field, record...}", reply));
    }
    Page out{std::move(e[0].str), {}};
    for (std::size_t i = 1; i < e.size(); i += 2) {
      out.jobs.push_back(Found{std::move(e[i].str), std::move(e[i + 1].str)});
    }
    return out;
  }
};

}  // namespace jq::redis::bindings
