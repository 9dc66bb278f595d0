#include "src/store/constraint_store.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "src/redis/bindings/constraint_state.hpp"
#include "src/redis/bindings/constraint_stats.hpp"
#include "src/redis/bindings/constraint_writes.hpp"

namespace jq::store {
namespace {

using redis::Reply;
using redis::bindings::ConstraintState;
using redis::bindings::ConstraintStats;
using redis::bindings::CreateConstraint;
using redis::bindings::RemoveConstraint;
using redis::bindings::UpdateConstraint;

StoreError no_constraint(const std::string& name) {
  return StoreError{StoreErrc::not_found, "no constraint " + name};
}

// A stored definition back as a constraint; nullopt (logged) when it does not decode.
std::optional<api::Constraint> decode_stored(const std::string& name, const std::string& bytes) {
  auto c = api::decode_stored_constraint(bytes);
  if (!c) {
    spdlog::error("constraint {} in Redis does not decode ({}); it is ignored", name,
                  c.error().message);
    return std::nullopt;
  }
  if (c->name != name) {
    spdlog::error("constraint {} in Redis is stored as {}; it is ignored", name, c->name);
    return std::nullopt;
  }
  return std::move(*c);
}

}  // namespace

std::optional<std::int64_t> next_start_at_ms(const std::optional<api::RateLimit>& rate,
                                             std::optional<std::int64_t> tat_ms,
                                             std::int64_t now_ms) {
  if (!rate || !tat_ms) return std::nullopt;
  // burst * period fits easily: at most 1e6 * 3.2e10 ms.
  const std::int64_t tolerance_ms = rate->burst * rate->period.count() / rate->limit;
  const std::int64_t at = *tat_ms - tolerance_ms;
  if (at <= now_ms) return std::nullopt;
  return at;
}

ConstraintStore::ConstraintStore(redis::Client& redis, redis::Keys keys, int shards,
                                 SystemClock clock)
    : redis_(redis),
      keys_(std::move(keys)),
      shards_(shards),
      clock_(std::move(clock)),
      handoff_(redis_, keys_, shards, clock_, [this] { return redis_.scripts_span_tags(); }) {}

std::int64_t ConstraintStore::now_ms() const {
  return epoch_ms(clock_());
}

asio::awaitable<Expected<Reply, StoreError>> ConstraintStore::eval(redis::ScriptCall call) {
  auto reply = co_await redis_.eval(std::move(call));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  if (reply->is_error()) co_return unexpected(StoreError::bad_reply("Redis", *reply));
  co_return std::move(*reply);
}

asio::awaitable<Expected<ConstraintSet, StoreError>> ConstraintStore::load() {
  std::vector<std::vector<std::string>> commands = {{"GET", keys_.constraints_version()},
                                                    {"HGETALL", keys_.constraints()}};
  auto reply = co_await redis_.pipeline(std::move(commands));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  if (!reply->is_array() || reply->elements.size() != 2 || !reply->elements[1].is_array()) {
    co_return unexpected(StoreError::bad_reply("loading the constraints", *reply));
  }
  const std::int64_t version = reply->elements[0].as_integer().value_or(0);
  const auto& flat = reply->elements[1].elements;
  std::vector<api::Constraint> constraints;
  for (std::size_t i = 0; i + 1 < flat.size(); i += 2) {
    if (auto c = decode_stored(flat[i].str, flat[i + 1].str)) constraints.push_back(std::move(*c));
  }
  co_return ConstraintSet(version, std::move(constraints));
}

asio::awaitable<Expected<std::int64_t, StoreError>> ConstraintStore::version() {
  std::vector<std::string> get{"GET", keys_.constraints_version()};
  auto reply = co_await redis_.command(std::move(get));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  co_return reply->as_integer().value_or(0);
}

asio::awaitable<Expected<std::vector<api::Constraint>, StoreError>> ConstraintStore::list() {
  auto set = co_await load();
  if (!set) co_return unexpected(std::move(set.error()));
  co_return set->constraints();
}

asio::awaitable<Expected<std::optional<std::string>, StoreError>> ConstraintStore::read(
    std::string name) {
  std::vector<std::string> hget{"HGET", keys_.constraints(), name};
  auto reply = co_await redis_.command(std::move(hget));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  if (reply->is_nil()) co_return std::optional<std::string>();
  if (reply->type != Reply::Type::string) {
    co_return unexpected(StoreError::bad_reply("reading a constraint", *reply));
  }
  co_return std::optional<std::string>(std::move(reply->str));
}

asio::awaitable<Expected<api::Constraint, StoreError>> ConstraintStore::get(std::string name) {
  auto bytes = co_await read(name);
  if (!bytes) co_return unexpected(std::move(bytes.error()));
  if (!*bytes) co_return unexpected(no_constraint(name));
  auto c = decode_stored(name, **bytes);
  if (!c) co_return unexpected(StoreError::internal("constraint " + name + " does not decode"));
  co_return std::move(*c);
}

asio::awaitable<Expected<api::Constraint, StoreError>> ConstraintStore::create(api::Constraint c) {
  redis::ScriptCall call =
      CreateConstraint::call(CreateConstraint::keys(keys_),
                             {c.name, api::encode_constraint(c), keys_.constraint_channel()});
  auto reply = co_await eval(std::move(call));
  if (!reply) co_return unexpected(std::move(reply.error()));
  auto written = CreateConstraint::decode(*reply);
  if (!written) co_return unexpected(StoreError::bad_reply(written.error()));
  if (written->status == CreateConstraint::Status::exists) {
    co_return unexpected(StoreError{
        StoreErrc::conflict, "constraint " + c.name + " exists; PUT /v1/constraints/" + c.name +
                                 " replaces it, PATCH changes some of its fields"});
  }
  co_return std::move(c);
}

asio::awaitable<Expected<api::Constraint, StoreError>> ConstraintStore::replace(api::Constraint c) {
  redis::ScriptCall call = UpdateConstraint::call(
      UpdateConstraint::keys(keys_),
      {c.name, api::encode_constraint(c), std::string(), keys_.constraint_channel(), now_ms()});
  auto reply = co_await eval(std::move(call));
  if (!reply) co_return unexpected(std::move(reply.error()));
  auto written = UpdateConstraint::decode(*reply);
  if (!written) co_return unexpected(StoreError::bad_reply(written.error()));
  if (written->status == UpdateConstraint::Status::not_found) {
    co_return unexpected(no_constraint(c.name));
  }
  if (written->status == UpdateConstraint::Status::changed) {  // never without `expected`
    co_return unexpected(StoreError::bad_reply(redis::bindings::bad_reply(
        UpdateConstraint::id, "changed without an expected definition", *reply)));
  }
  if (written->status == UpdateConstraint::Status::replaced) co_await wake_held(c.name);
  co_return std::move(c);
}

asio::awaitable<Expected<api::Constraint, StoreError>> ConstraintStore::patch(
    std::string name, api::ConstraintPatch patch) {
  for (int attempt = 0; attempt < kPatchAttempts; ++attempt) {
    auto bytes = co_await read(name);
    if (!bytes) co_return unexpected(std::move(bytes.error()));
    if (!*bytes) co_return unexpected(no_constraint(name));
    auto current = decode_stored(name, **bytes);
    if (!current)
      co_return unexpected(StoreError::internal("constraint " + name + " does not decode"));
    api::Constraint changed = api::apply_patch(std::move(*current), patch);
    redis::ScriptCall call = UpdateConstraint::call(
        UpdateConstraint::keys(keys_), {name, api::encode_constraint(changed), std::move(**bytes),
                                        keys_.constraint_channel(), now_ms()});
    auto reply = co_await eval(std::move(call));
    if (!reply) co_return unexpected(std::move(reply.error()));
    auto written = UpdateConstraint::decode(*reply);
    if (!written) co_return unexpected(StoreError::bad_reply(written.error()));
    switch (written->status) {
      case UpdateConstraint::Status::replaced:
        co_await wake_held(name);
        co_return std::move(changed);
      case UpdateConstraint::Status::unchanged:
        co_return std::move(changed);
      case UpdateConstraint::Status::not_found:  // removed since it was read
        co_return unexpected(no_constraint(name));
      case UpdateConstraint::Status::changed:  // another change came in between: merge again
        break;
    }
  }
  co_return unexpected(StoreError{StoreErrc::conflict, "constraint " + name +
                                                           " kept changing while it was patched; "
                                                           "try again"});
}

asio::awaitable<Expected<void, StoreError>> ConstraintStore::remove(std::string name) {
  redis::ScriptCall call = RemoveConstraint::call(RemoveConstraint::keys(keys_),
                                                  {name, keys_.constraint_channel(), now_ms()});
  auto reply = co_await eval(std::move(call));
  if (!reply) co_return unexpected(std::move(reply.error()));
  auto written = RemoveConstraint::decode(*reply);
  if (!written) co_return unexpected(StoreError::bad_reply(written.error()));
  if (written->status == RemoveConstraint::Status::not_found) {
    co_return unexpected(no_constraint(name));
  }
  co_await wake_held(name);
  co_return Expected<void, StoreError>{};
}

// A failure here is logged, not answered: the change itself is stored, and its script made the
// constraint's held pairs due, so any master's promoter lets them go soon.
asio::awaitable<void> ConstraintStore::wake_held(const std::string& name) {
  constexpr int kPairs = 1000;
  auto woken = co_await handoff_.wake_due(kPairs);
  if (!woken) {
    spdlog::warn("constraint {} changed, but its held jobs could not be woken now: {}", name,
                 woken.error().message);
  }
}

// Replace first: the usual case at a restart is a constraint that is already there. A create
// that loses to another master's create of the same name replaces in turn.
asio::awaitable<Expected<void, StoreError>> ConstraintStore::apply(api::Constraint c) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto replaced = co_await replace(c);
    if (replaced) co_return Expected<void, StoreError>{};
    if (replaced.error().code != StoreErrc::not_found) co_return unexpected(replaced.error());
    auto created = co_await create(c);
    if (created) co_return Expected<void, StoreError>{};
    if (created.error().code != StoreErrc::conflict) co_return unexpected(created.error());
  }
  co_return unexpected(StoreError{StoreErrc::conflict,
                                  "constraint " + c.name + " kept changing while it was applied"});
}

asio::awaitable<Expected<std::map<std::string, std::int64_t>, StoreError>>
ConstraintStore::sum_over_shards(std::function<std::string(int)> key) {
  std::vector<std::vector<std::string>> reads;
  reads.reserve(static_cast<std::size_t>(shards_));
  for (int s = 0; s < shards_; ++s) reads.push_back({"HGETALL", key(s)});
  auto reply = co_await redis_.pipeline(std::move(reads));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  if (!reply->is_array() || reply->elements.size() != static_cast<std::size_t>(shards_)) {
    co_return unexpected(StoreError::bad_reply("reading the shards' held counts", *reply));
  }
  std::map<std::string, std::int64_t> sums;
  for (const Reply& hash : reply->elements) {
    for (std::size_t i = 0; i + 1 < hash.elements.size(); i += 2) {
      sums[hash.elements[i].str] += hash.elements[i + 1].as_integer().value_or(0);
    }
  }
  co_return sums;
}

asio::awaitable<Expected<ConstraintLiveState, StoreError>> ConstraintStore::live_state(
    api::Constraint c) {
  auto waiting =
      co_await sum_over_shards([&](int shard) { return keys_.held_waiting(shard, c.name); });
  if (!waiting) co_return unexpected(std::move(waiting.error()));
  const std::int64_t now = now_ms();
  ConstraintState::Args args{now, kTopKeys, {}};
  for (auto& [key, n] : *waiting) {
    if (n > 0) args.waiting.push_back({key, n});
  }
  redis::ScriptCall call =
      ConstraintState::call(ConstraintState::keys(keys_, c.name), std::move(args));
  auto reply = co_await eval(std::move(call));
  if (!reply) co_return unexpected(std::move(reply.error()));
  auto state = ConstraintState::decode(*reply);
  if (!state) co_return unexpected(StoreError::bad_reply(state.error()));
  ConstraintLiveState out{state->waiting, state->running, state->keys, {}};
  out.top_keys.reserve(state->top.size());
  for (ConstraintState::Key& k : state->top) {
    out.top_keys.push_back(ConstraintKeyState{std::move(k.key), k.waiting, k.running,
                                              next_start_at_ms(c.rate, k.tat_ms, now)});
  }
  co_return out;
}

asio::awaitable<Expected<std::vector<ConstraintTotals>, StoreError>> ConstraintStore::totals() {
  auto tallies = co_await sum_over_shards([this](int shard) { return keys_.held_tallies(shard); });
  if (!tallies) co_return unexpected(std::move(tallies.error()));
  redis::ScriptCall call = ConstraintStats::call(ConstraintStats::keys(keys_), {now_ms()});
  auto reply = co_await eval(std::move(call));
  if (!reply) co_return unexpected(std::move(reply.error()));
  auto stats = ConstraintStats::decode(*reply);
  if (!stats) co_return unexpected(StoreError::bad_reply(stats.error()));
  auto tally = [&](const std::string& field) {
    auto it = tallies->find(field);
    return it == tallies->end() ? std::int64_t{0} : std::max<std::int64_t>(it->second, 0);
  };
  std::vector<ConstraintTotals> out;
  out.reserve(stats->size());
  for (const ConstraintStats::Constraint& s : *stats) {
    auto c = decode_stored(s.name, s.definition);
    if (!c) continue;
    out.push_back(ConstraintTotals{std::move(*c), tally("waiting:" + s.name), s.running, s.started,
                                   tally("deferred:" + s.name)});
  }
  co_return out;
}

}  // namespace jq::store
