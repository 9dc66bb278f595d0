// The name claims of schedules (contract: a schedule's name is unique across shards): reading
// and compare-and-setting a name's claim in its home shard, settling a name whose claim points
// at a move or at a missing record, and finishing moves. Part of ScheduleStore; the requests
// are in schedule_store.cpp.
#include <spdlog/spdlog.h>

#include "src/redis/bindings/schedule_writes.hpp"
#include "src/schedules/schedule_store.hpp"

namespace jq::schedules {
namespace {

using redis::Reply;
using redis::bindings::ClaimScheduleName;
using redis::bindings::RemoveSchedule;
using redis::bindings::SaveSchedule;

}  // namespace

asio::awaitable<Expected<std::string, StoreError>> ScheduleStore::read_claim(
    const std::string& name) {
  std::vector<std::string> hget{"HGET", keys_.schedule_homes(home(name)), name};
  auto reply = co_await redis_.command(std::move(hget));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  if (reply->is_nil()) co_return std::string();
  if (reply->type != Reply::Type::string) {
    co_return unexpected(StoreError::bad_reply("reading a schedule's claim", *reply));
  }
  co_return std::move(reply->str);
}

asio::awaitable<Expected<bool, StoreError>> ScheduleStore::cas_claim(const std::string& name,
                                                                     std::string expected,
                                                                     std::string claim) {
  redis::ScriptCall call = ClaimScheduleName::call(ClaimScheduleName::keys(keys_, home(name)),
                                                   {name, std::move(expected), std::move(claim)});
  auto reply = co_await eval(std::move(call));
  if (!reply) co_return unexpected(std::move(reply.error()));
  auto claimed = ClaimScheduleName::decode(*reply);
  if (!claimed) co_return unexpected(StoreError::bad_reply(claimed.error()));
  co_return claimed->done;
}

// Tokens come from a counter in the name's home shard, so the tokens of one name only grow.
asio::awaitable<Expected<std::int64_t, StoreError>> ScheduleStore::next_token(
    const std::string& name) {
  std::vector<std::string> incr{"HINCRBY", keys_.stats(home(name)), "schedule_token", "1"};
  auto reply = co_await redis_.command(std::move(incr));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  if (!reply->is_integer()) co_return unexpected(StoreError::bad_reply("a token", *reply));
  co_return reply->integer;
}

asio::awaitable<Expected<ScheduleStore::Settled, StoreError>> ScheduleStore::settle(
    std::string name) {
  for (int round = 0; round < 2 * kAttempts; ++round) {
    auto claim = co_await read_claim(name);
    if (!claim) co_return unexpected(std::move(claim.error()));
    if (claim->empty()) co_return Settled{};
    auto live = co_await settle_round(name, *claim);
    if (!live) co_return unexpected(std::move(live.error()));
    if (*live) co_return Settled{std::move(*claim), std::move(*live)};
  }
  co_return unexpected(kept_changing(name));
}

// The live record the claim names; or nullopt after one step that settles the name further: a
// move finished, or a claim whose record is missing fenced and cleared.
asio::awaitable<Expected<std::optional<StoredSchedule>, StoreError>> ScheduleStore::settle_round(
    const std::string& name, std::string claim_text) {
  using Live = std::optional<StoredSchedule>;
  const auto claim = parse_claim(claim_text);
  if (claim) {
    auto record = co_await read_record(claim->shard, name);
    if (!record) co_return unexpected(std::move(record.error()));
    if (*record && (*record)->token == claim->token && (*record)->status != RecordStatus::gone) {
      if ((*record)->status == RecordStatus::leaving) {
        auto moved = co_await finish_move(claim->shard, name, std::move(**record));
        if (!moved) co_return unexpected(std::move(moved.error()));
        co_return Live();
      }
      ScheduleRecord& stored = **record;
      auto live = stored_schedule(name, claim->shard, stored);
      if (!live) {
        // Only a removal works on it (the callers that need the definition refuse it).
        StoredSchedule raw{{}, claim->shard, std::move(stored), false};
        raw.schedule.name = name;
        co_return Live(std::move(raw));
      }
      co_return std::move(live);
    }
    if (claim->from_shard) {  // a move whose new record is not written yet
      auto from = co_await read_record(*claim->from_shard, name);
      if (!from) co_return unexpected(std::move(from.error()));
      const auto& f = *from;
      if (f && f->token == claim->from_token && f->status == RecordStatus::leaving && f->to &&
          f->to->shard == claim->shard && f->to->token == claim->token) {
        auto moved = co_await finish_move(*claim->from_shard, name, std::move(*f));
        if (!moved) co_return unexpected(std::move(moved.error()));
        co_return Live();
      }
    }
    // The claim's record is missing: its writer died, or is slow. Fence its token there first,
    // so that it cannot arrive after the name has been given to someone else.
    auto reply =
        co_await eval(remove_call(claim->shard, name, claim->token, RemoveSchedule::Mode::fence));
    if (!reply) co_return unexpected(std::move(reply.error()));
    auto fenced = RemoveSchedule::decode(*reply);
    if (!fenced) co_return unexpected(StoreError::bad_reply(fenced.error()));
    if (*fenced == RemoveSchedule::Status::done) co_return Live();  // it arrived meanwhile
  } else {
    spdlog::error("the claim of schedule {} is unreadable ({}); it is cleared", name, claim_text);
  }
  auto cleared = co_await cas_claim(name, std::move(claim_text), "");
  if (!cleared) co_return unexpected(std::move(cleared.error()));
  co_return Live();
}

// The claim first (from the leaving record to the new one), then the new record, then the old
// record goes. Each step is safe to repeat, so two masters finishing one move agree.
asio::awaitable<Expected<void, StoreError>> ScheduleStore::finish_move(int shard, std::string name,
                                                                       ScheduleRecord leaving) {
  if (!leaving.to) {
    co_return unexpected(StoreError::internal("leaving schedule " + name + " has no destination"));
  }
  const MoveIntent to = *leaving.to;
  auto claimed = co_await claim_move(shard, name, leaving.token, to);
  if (!claimed) co_return unexpected(std::move(claimed.error()));
  if (*claimed) {
    redis::ScriptCall save = SaveSchedule::call(
        SaveSchedule::keys(keys_, to.shard),
        {name, SaveSchedule::Mode::arrive, to.token, 0, to.definition, to.anchor_ms, to.next_ms,
         encode_carried(leaving), keys_.events_channel(to.shard), to.shard});
    auto reply = co_await eval(std::move(save));
    if (!reply) co_return unexpected(std::move(reply.error()));
    auto saved = SaveSchedule::decode(*reply);
    if (!saved) co_return unexpected(StoreError::bad_reply(saved.error()));
    // Saved, there already, or overtaken (removed there since): the old record can go.
    if (saved->status == SaveSchedule::Status::taken) {
      co_return unexpected(StoreError::internal("schedule " + name + " moving to shard " +
                                                std::to_string(to.shard) +
                                                " meets another live record there"));
    }
  }
  auto reply = co_await eval(remove_call(shard, name, leaving.token, RemoveSchedule::Mode::remove));
  if (!reply) co_return unexpected(std::move(reply.error()));
  if (auto removed = RemoveSchedule::decode(*reply); !removed) {
    co_return unexpected(StoreError::bad_reply(removed.error()));
  }
  co_return Expected<void, StoreError>{};
}

// Moves the claim from the leaving record to `to`. false: the move was given up (the name was
// deleted, or is another schedule's by now), so only the leaving record must go.
asio::awaitable<Expected<bool, StoreError>> ScheduleStore::claim_move(int shard,
                                                                      const std::string& name,
                                                                      std::int64_t token,
                                                                      MoveIntent to) {
  const std::string target = format_claim(Claim{to.shard, to.token, shard, token});
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    auto current = co_await read_claim(name);
    if (!current) co_return unexpected(std::move(current.error()));
    const auto claim = parse_claim(*current);
    if (claim_names(claim, to.shard, to.token)) co_return true;  // another master moved it already
    if (!claim_names(claim, shard, token)) {
      spdlog::warn("schedule {}: its move to shard {} was given up; its old record goes", name,
                   to.shard);
      co_return false;
    }
    auto moved = co_await cas_claim(name, *current, target);
    if (!moved) co_return unexpected(std::move(moved.error()));
    if (*moved) co_return true;
  }
  co_return unexpected(kept_changing(name));
}

}  // namespace jq::schedules
