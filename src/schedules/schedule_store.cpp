#include "src/schedules/schedule_store.hpp"

#include <algorithm>
#include <map>

#include <spdlog/spdlog.h>

#include "src/redis/bindings/fire_schedule.hpp"
#include "src/redis/bindings/schedule_writes.hpp"
#include "src/store/job_routing.hpp"
#include "src/store/job_store.hpp"

namespace jq::schedules {
namespace {

using redis::Reply;
using redis::bindings::FireSchedule;
using redis::bindings::LeaveSchedule;
using redis::bindings::RemoveSchedule;
using redis::bindings::SaveSchedule;
using store::StoreErrc;

StoreError no_schedule(const std::string& name) {
  return StoreError{StoreErrc::not_found, "no schedule " + name};
}

StoreError unreadable(const std::string& name) {
  return StoreError{StoreErrc::internal,
                    "schedule " + name +
                        " is stored with a definition this master cannot read (see its log: a "
                        "time zone its tz database lacks, or a newer release's format); DELETE "
                        "/v1/schedules/" +
                        name + " removes it, then create it again"};
}

}  // namespace

StoreError ScheduleStore::kept_changing(const std::string& name) {
  return StoreError{StoreErrc::conflict,
                    "schedule " + name + " kept changing while this request ran; try again"};
}

std::optional<StoredSchedule> stored_schedule(const std::string& name, int shard,
                                              ScheduleRecord record) {
  auto s = api::decode_schedule(record.definition, api::MediaType::msgpack);
  if (!s) {
    spdlog::error("schedule {} in shard {} does not decode ({}); it is ignored", name, shard,
                  s.error().message);
    return std::nullopt;
  }
  if (s->name != name) {
    spdlog::error("schedule {} in shard {} is stored as {}; it is ignored", name, shard, s->name);
    return std::nullopt;
  }
  return StoredSchedule{std::move(*s), shard, std::move(record)};
}

std::int64_t first_tick(const api::Schedule& schedule, std::int64_t anchor_ms,
                        std::int64_t after_ms) {
  if (schedule.paused) return 0;
  return tick_after(schedule, timetable_of(schedule, anchor_ms), after_ms).value_or(0);
}

ScheduleStore::ScheduleStore(redis::Client& redis, redis::Keys keys, int shards, SystemClock clock,
                             api::JobDefaults defaults)
    : redis_(redis),
      keys_(std::move(keys)),
      shards_(shards),
      clock_(std::move(clock)),
      defaults_(defaults) {}

int ScheduleStore::home(const std::string& name) const {
  return store::hashed_shard(name, shards_);
}

int ScheduleStore::shard_of(const api::Schedule& schedule) const {
  auto job = api::template_job(schedule, defaults_);
  if (!job) return home(schedule.name);
  return store::routed_shard(*job, shards_).value_or(home(schedule.name));
}

asio::awaitable<Expected<Reply, StoreError>> ScheduleStore::eval(redis::ScriptCall call) {
  auto reply = co_await redis_.eval(std::move(call));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  if (reply->is_error()) co_return unexpected(StoreError::bad_reply("Redis", *reply));
  co_return std::move(*reply);
}

asio::awaitable<Expected<std::optional<ScheduleRecord>, StoreError>> ScheduleStore::read_record(
    int shard, const std::string& name) {
  std::vector<std::string> hget{"HGET", keys_.schedules(shard), name};
  auto reply = co_await redis_.command(std::move(hget));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  if (reply->is_nil()) co_return std::optional<ScheduleRecord>();
  auto record = decode_schedule_record(reply->str);
  if (!record) {
    co_return unexpected(StoreError::internal("unreadable record of schedule " + name));
  }
  co_return std::move(record);
}

asio::awaitable<Expected<std::vector<StoredSchedule>, StoreError>> ScheduleStore::list() {
  std::vector<std::vector<std::string>> commands;
  for (int shard = 0; shard < shards_; ++shard) {
    commands.push_back({"HGETALL", keys_.schedules(shard)});
    commands.push_back({"HGETALL", keys_.schedule_homes(shard)});
  }
  auto reply = co_await redis_.pipeline(std::move(commands));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  if (!reply->is_array() || reply->elements.size() != 2 * static_cast<std::size_t>(shards_)) {
    co_return unexpected(StoreError::bad_reply("listing the schedules", *reply));
  }
  std::map<std::string, std::optional<Claim>> claims;
  for (int shard = 0; shard < shards_; ++shard) {
    const auto& flat = reply->elements[2 * static_cast<std::size_t>(shard) + 1].elements;
    for (std::size_t i = 0; i + 1 < flat.size(); i += 2) {
      claims[flat[i].str] = parse_claim(flat[i + 1].str);
    }
  }
  std::vector<StoredSchedule> out;
  for (int shard = 0; shard < shards_; ++shard) {
    const auto& flat = reply->elements[2 * static_cast<std::size_t>(shard)].elements;
    for (std::size_t i = 0; i + 1 < flat.size(); i += 2) {
      auto record = decode_schedule_record(flat[i + 1].str);
      const auto claim = claims.find(flat[i].str);
      if (!record || record->status != RecordStatus::active || claim == claims.end() ||
          !claim_names(claim->second, shard, record->token)) {
        continue;
      }
      if (auto s = stored_schedule(flat[i].str, shard, std::move(*record))) {
        out.push_back(std::move(*s));
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const StoredSchedule& a, const StoredSchedule& b) {
    return a.schedule.name < b.schedule.name;
  });
  co_return out;
}

asio::awaitable<Expected<StoredSchedule, StoreError>> ScheduleStore::get(std::string name) {
  auto settled = co_await settle(name);
  if (!settled) co_return unexpected(std::move(settled.error()));
  if (!settled->live) co_return unexpected(no_schedule(name));
  if (!settled->live->readable) co_return unexpected(unreadable(name));
  co_return std::move(*settled->live);
}

asio::awaitable<Expected<StoredSchedule, StoreError>> ScheduleStore::create(
    api::Schedule schedule) {
  const std::string name = schedule.name;
  const int shard = shard_of(schedule);
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    auto settled = co_await settle(name);
    if (!settled) co_return unexpected(std::move(settled.error()));
    if (settled->live) {
      co_return unexpected(StoreError{StoreErrc::conflict,
                                      "schedule " + name + " exists; PUT /v1/schedules/" + name +
                                          " replaces it, PATCH changes some of its fields"});
    }
    auto token = co_await next_token(name);
    if (!token) co_return unexpected(std::move(token.error()));
    const std::string claim = format_claim(Claim{shard, *token, std::nullopt, 0});
    auto claimed = co_await cas_claim(name, "", claim);
    if (!claimed) co_return unexpected(std::move(claimed.error()));
    if (!*claimed) continue;  // another request claimed it meanwhile: look again
    const std::int64_t now = now_ms();
    ScheduleRecord record;
    record.token = *token;
    record.definition = api::encode_schedule(schedule);
    record.anchor_ms = now;
    record.next_ms = first_tick(schedule, now, now);
    redis::ScriptCall save = SaveSchedule::call(
        SaveSchedule::keys(keys_, shard),
        {name, SaveSchedule::Mode::arrive, record.token, 0, record.definition, record.anchor_ms,
         record.next_ms, std::string(), keys_.events_channel(shard), shard});
    auto reply = co_await eval(std::move(save));
    if (!reply) {
      // The claim stays: the save may have run with its answer lost (a connection cut, a
      // timeout), and a record whose claim was given back would fire unseen, beyond GET and
      // DELETE. The next request on the name settles it: the record there is the schedule,
      // none is fenced and the name freed (settle).
      co_return unexpected(std::move(reply.error()));
    }
    auto saved = SaveSchedule::decode(*reply);
    if (!saved) co_return unexpected(StoreError::bad_reply(saved.error()));
    if (saved->status != SaveSchedule::Status::saved) {
      co_return unexpected(
          StoreError{StoreErrc::conflict,
                     "schedule " + name + " was created by another request at the same time"});
    }
    record.version = saved->version;
    co_return StoredSchedule{std::move(schedule), shard, std::move(record)};
  }
  co_return unexpected(kept_changing(name));
}

asio::awaitable<Expected<StoredSchedule, StoreError>> ScheduleStore::replace(
    api::Schedule schedule) {
  const std::string name = schedule.name;
  auto to = [schedule](api::Schedule) -> Expected<api::Schedule, StoreError> { return schedule; };
  co_return co_await change(name, std::move(to));
}

asio::awaitable<Expected<StoredSchedule, StoreError>> ScheduleStore::patch(
    std::string name, api::SchedulePatch patch) {
  auto to = [patch](api::Schedule current) -> Expected<api::Schedule, StoreError> {
    auto patched = api::apply_patch(std::move(current), patch);
    if (!patched) {
      return unexpected(StoreError{StoreErrc::conflict,
                                   "another change of the schedule came first, and this patch "
                                   "does not apply to it: " +
                                       patched.error().message});
    }
    return std::move(*patched);
  };
  co_return co_await change(std::move(name), std::move(to));
}

asio::awaitable<Expected<StoredSchedule, StoreError>> ScheduleStore::change(
    std::string name, std::function<Expected<api::Schedule, StoreError>(api::Schedule)> to) {
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    auto live = co_await get(name);
    if (!live) co_return unexpected(std::move(live.error()));
    auto next = to(live->schedule);
    if (!next) co_return unexpected(std::move(next.error()));
    auto wrote = co_await write_change(*live, *next);
    if (!wrote) co_return unexpected(std::move(wrote.error()));
    if (*wrote) co_return co_await get(name);
  }
  co_return unexpected(kept_changing(name));
}

std::pair<std::int64_t, std::int64_t> ScheduleStore::times_after_change(
    const StoredSchedule& current, const api::Schedule& next) const {
  const ScheduleRecord& r = current.record;
  const bool timetable = api::timetable_changed(current.schedule, next);
  if (!timetable && current.schedule.paused == next.paused) return {r.anchor_ms, r.next_ms};
  // A new timetable counts from now; a resumed one goes on from its next tick after now.
  const std::int64_t now = now_ms();
  const std::int64_t anchor = timetable ? now : r.anchor_ms;
  return {anchor, first_tick(next, anchor, now)};
}

asio::awaitable<Expected<bool, StoreError>> ScheduleStore::write_change(
    const StoredSchedule& current, const api::Schedule& next) {
  const std::string& name = next.name;
  const ScheduleRecord& r = current.record;
  const auto [anchor, next_ms] = times_after_change(current, next);
  const int to_shard = shard_of(next);
  if (to_shard == current.shard) {
    redis::ScriptCall save = SaveSchedule::call(
        SaveSchedule::keys(keys_, current.shard),
        {name, SaveSchedule::Mode::update, r.token, r.version, api::encode_schedule(next), anchor,
         next_ms, std::string(), keys_.events_channel(current.shard), current.shard, r.next_ms});
    auto reply = co_await eval(std::move(save));
    if (!reply) co_return unexpected(std::move(reply.error()));
    auto saved = SaveSchedule::decode(*reply);
    if (!saved) co_return unexpected(StoreError::bad_reply(saved.error()));
    co_return saved->status == SaveSchedule::Status::saved;
  }
  auto token = co_await next_token(name);
  if (!token) co_return unexpected(std::move(token.error()));
  MoveIntent to{to_shard, *token, api::encode_schedule(next), anchor, next_ms};
  redis::ScriptCall leave =
      LeaveSchedule::call(LeaveSchedule::keys(keys_, current.shard),
                          {name, r.token, r.version, to.shard, to.token, to.definition,
                           to.anchor_ms, to.next_ms, now_ms() + kSettleAfterMs,
                           keys_.events_channel(current.shard), current.shard, r.next_ms, r.runs});
  auto reply = co_await eval(std::move(leave));
  if (!reply) co_return unexpected(std::move(reply.error()));
  auto left = LeaveSchedule::decode(*reply);
  if (!left) co_return unexpected(StoreError::bad_reply(left.error()));
  if (left->status != LeaveSchedule::Status::leaving) co_return false;
  ScheduleRecord leaving = r;
  leaving.status = RecordStatus::leaving;
  leaving.version = left->version;
  leaving.to = std::move(to);
  auto moved = co_await finish_move(current.shard, name, std::move(leaving));
  if (!moved) co_return unexpected(std::move(moved.error()));
  co_return true;
}

asio::awaitable<Expected<void, StoreError>> ScheduleStore::remove(std::string name) {
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    auto settled = co_await settle(name);
    if (!settled) co_return unexpected(std::move(settled.error()));
    if (!settled->live) co_return unexpected(no_schedule(name));
    const StoredSchedule& live = *settled->live;
    auto reply = co_await eval(
        remove_call(live.shard, name, live.record.token, RemoveSchedule::Mode::remove));
    if (!reply) co_return unexpected(std::move(reply.error()));
    auto removed = RemoveSchedule::decode(*reply);
    if (!removed) co_return unexpected(StoreError::bad_reply(removed.error()));
    if (*removed != RemoveSchedule::Status::done) continue;
    // If this fails, the claim names a removed record: the name is free all the same.
    auto cleared = co_await cas_claim(name, settled->claim, "");
    if (!cleared) spdlog::warn("schedule {} removed; its claim stays until the name is used", name);
    co_return Expected<void, StoreError>{};
  }
  co_return unexpected(kept_changing(name));
}

asio::awaitable<Expected<Fired, StoreError>> ScheduleStore::run_now(std::string name) {
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    auto live = co_await get(name);
    if (!live) co_return unexpected(std::move(live.error()));
    TickPlan plan;
    plan.tick_ms = now_ms();
    auto fired = co_await fire_call(*live, plan, true);
    if (!fired) co_return unexpected(std::move(fired.error()));
    if (*fired) co_return std::move(**fired);
  }
  co_return unexpected(kept_changing(name));
}

// Replace first: the usual case at a restart is a schedule that is already there.
asio::awaitable<Expected<void, StoreError>> ScheduleStore::apply(api::Schedule schedule) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto replaced = co_await replace(schedule);
    if (replaced) co_return Expected<void, StoreError>{};
    if (replaced.error().code != StoreErrc::not_found) co_return unexpected(replaced.error());
    auto created = co_await create(schedule);
    if (created) co_return Expected<void, StoreError>{};
    if (created.error().code != StoreErrc::conflict) co_return unexpected(created.error());
  }
  co_return unexpected(kept_changing(schedule.name));
}

asio::awaitable<Expected<std::vector<StoredSchedule>, StoreError>> ScheduleStore::load_shard(
    int shard) {
  std::vector<std::string> hgetall{"HGETALL", keys_.schedules(shard)};
  auto reply = co_await redis_.command(std::move(hgetall));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  if (!reply->is_array()) co_return unexpected(StoreError::bad_reply("loading schedules", *reply));
  std::vector<StoredSchedule> out;
  std::vector<std::string> tombstones;
  const auto& flat = reply->elements;
  for (std::size_t i = 0; i + 1 < flat.size(); i += 2) {
    auto record = decode_schedule_record(flat[i + 1].str);
    if (record && record->status == RecordStatus::gone) tombstones.push_back(flat[i].str);
    if (!record || record->status == RecordStatus::gone) continue;
    if (auto s = stored_schedule(flat[i].str, shard, std::move(*record))) {
      out.push_back(std::move(*s));
    }
  }
  co_await note_tombstones(shard, std::move(tombstones));
  co_return out;
}

// Tombstones written without being noted in the tombstones zset (by an older jqmaster, also one
// still running during a rolling upgrade) are noted, as of now, for removeSchedule's sweep. NX
// keeps the time of those noted already (every tombstone this version writes). In pieces: a
// backlog may hold many; once noted and swept, a shard holds about a day's deletions.
asio::awaitable<void> ScheduleStore::note_tombstones(int shard, std::vector<std::string> names) {
  constexpr std::size_t kPerCommand = 512;
  const std::string now = std::to_string(now_ms());
  std::vector<std::vector<std::string>> commands;
  for (std::size_t at = 0; at < names.size(); at += kPerCommand) {
    auto& zadd = commands.emplace_back(
        std::vector<std::string>{"ZADD", keys_.schedule_tombstones(shard), "NX"});
    for (std::size_t i = at; i < std::min(names.size(), at + kPerCommand); ++i) {
      zadd.push_back(now);
      zadd.push_back(std::move(names[i]));
    }
  }
  if (commands.empty()) co_return;
  auto noted = co_await redis_.pipeline(std::move(commands));
  if (!noted) {
    // Not needed to load: the next full load notes them.
    spdlog::warn(
        "schedules of shard {}: noting the tombstones to sweep failed ({}); trying again at the "
        "next full load",
        shard, noted.error().message());
  }
}

redis::ScriptCall ScheduleStore::remove_call(int shard, std::string name, std::int64_t token,
                                             RemoveSchedule::Mode mode) const {
  return RemoveSchedule::call(
      RemoveSchedule::keys(keys_, shard),
      {std::move(name), token, mode, keys_.events_channel(shard), shard, now_ms()});
}

asio::awaitable<Expected<std::optional<StoredSchedule>, StoreError>> ScheduleStore::load(
    int shard, std::string name) {
  auto record = co_await read_record(shard, name);
  if (!record) co_return unexpected(std::move(record.error()));
  if (!*record || (*record)->status == RecordStatus::gone) {
    co_return std::optional<StoredSchedule>();
  }
  co_return stored_schedule(name, shard, std::move(**record));
}

asio::awaitable<Expected<std::optional<Fired>, StoreError>> ScheduleStore::fire(StoredSchedule s,
                                                                                TickPlan plan) {
  co_return co_await fire_call(s, plan, false);
}

asio::awaitable<Expected<void, StoreError>> ScheduleStore::finish_leaving(int shard,
                                                                          std::string name) {
  auto record = co_await read_record(shard, name);
  if (!record) co_return unexpected(std::move(record.error()));
  if (!*record || (*record)->status != RecordStatus::leaving) {
    co_return Expected<void, StoreError>{};
  }
  co_return co_await finish_move(shard, name, std::move(**record));
}

asio::awaitable<Expected<std::optional<Fired>, StoreError>> ScheduleStore::fire_call(
    const StoredSchedule& s, const TickPlan& plan, bool now_mode) {
  auto job = api::template_job(s.schedule, defaults_);
  if (!job) {
    co_return unexpected(StoreError::internal("the job template of schedule " + s.schedule.name +
                                              " does not decode: " + job.error().message));
  }
  if (constraints_ && !constraints_->loaded()) {
    auto loaded = co_await constraints_->load_first();
    if (!loaded) co_return unexpected(std::move(loaded.error()));
  }
  const auto constraints = constraints_ ? constraints_->current() : nullptr;
  FireSchedule::Args args;
  args.name = s.schedule.name;
  args.token = s.record.token;
  args.version = s.record.version;
  args.mode = now_mode ? FireSchedule::Mode::now : FireSchedule::Mode::tick;
  args.next_tick_ms = s.record.next_ms;
  args.action = plan.run ? FireSchedule::Action::run : FireSchedule::Action::skip;
  args.missed = plan.missed;
  args.after_ms = plan.after_ms;
  args.overlap_skip = s.schedule.overlap == api::Overlap::skip;
  args.scheduled_at_ms = plan.tick_ms;
  args.scheduled_at = format_in_zone(plan.tick_ms, s.schedule.zone);
  args.now_ms = now_ms();
  args.ready_stamp_us = epoch_us(clock_());
  args.channel = keys_.events_channel(s.shard);
  args.shard = s.shard;
  args.job = store::push_job_args(std::move(*job), args.now_ms, constraints.get());
  redis::ScriptCall call = FireSchedule::call(FireSchedule::keys(keys_, s.shard), std::move(args));
  auto reply = co_await eval(std::move(call));
  if (!reply) co_return unexpected(std::move(reply.error()));
  auto fired = FireSchedule::decode(*reply);
  if (!fired) co_return unexpected(StoreError::bad_reply(fired.error()));
  switch (fired->status) {
    case FireSchedule::Status::made:
      co_return std::optional<Fired>(Fired{FireOutcome::made, std::move(fired->job_id)});
    case FireSchedule::Status::overlap:
      co_return std::optional<Fired>(Fired{FireOutcome::overlap, std::move(fired->job_id)});
    case FireSchedule::Status::duplicate:
      co_return std::optional<Fired>(Fired{FireOutcome::duplicate, std::move(fired->job_id)});
    case FireSchedule::Status::missed:
      co_return std::optional<Fired>(Fired{FireOutcome::missed, {}});
    case FireSchedule::Status::not_found:
    case FireSchedule::Status::changed:
      break;
  }
  co_return std::optional<Fired>();
}

}  // namespace jq::schedules
