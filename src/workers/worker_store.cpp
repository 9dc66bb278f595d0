#include "src/workers/worker_store.hpp"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>
#include "src/redis/bindings/acquire_slots.hpp"
#include "src/redis/bindings/beat_master.hpp"
#include "src/redis/bindings/expire_workers.hpp"
#include "src/redis/bindings/register_worker.hpp"
#include "src/redis/bindings/release_slots.hpp"
#include "src/redis/bindings/remove_worker.hpp"
#include "src/redis/bindings/set_slots.hpp"
#include "src/redis/script_sources.hpp"
#include "src/util/hex.hpp"
#include "src/util/time.hpp"

namespace jq::workers {
namespace {

using nlohmann::json;
using redis::bindings::AcquireSlots;
using redis::bindings::BeatMaster;
using redis::bindings::ExpireWorkers;
using redis::bindings::RegisterWorker;
using redis::bindings::ReleaseSlots;
using redis::bindings::RemoveWorker;
using redis::bindings::SetSlots;
using redis::bindings::UpdateWorkerStats;

std::optional<Endpoint> decode_endpoint(const std::string& id, const std::string& text) {
  try {
    json j = json::parse(text);
    Endpoint e;
    e.id = id;
    e.url = j.at("url").get<std::string>();
    auto address = api::parse_http_url(e.url, api::UrlSchemes::http_or_https);
    if (!address) return std::nullopt;
    e.address = *address;
    for (const auto& n : j.at("names")) {
      if (n == "*")
        e.all_names = true;
      else
        e.names.push_back(n.get<std::string>());
    }
    e.concurrency = j.at("concurrency").get<int>();
    for (const auto& [k, v] : j.at("headers").items())
      e.headers.emplace_back(k, v.get<std::string>());
    e.ca_file = j.value("ca_file", std::string());
    e.ttl_ms = j.value("ttl_ms", std::int64_t{0});
    e.registered_at_ms = j.value("registered_at_ms", std::int64_t{0});
    e.expires_at_ms = j.value("expires_at_ms", std::int64_t{0});
    auto secret = hex_decode(j.value("secret_hex", std::string()));
    if (!secret) return std::nullopt;
    e.secret = std::move(*secret);
    return e;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

bool Endpoint::serves(const std::string& name) const {
  if (all_names) return true;
  for (const auto& n : names) {
    if (n == name) return true;
  }
  return false;
}

WorkerStore::WorkerStore(redis::Client& redis, redis::Keys keys, SystemClock clock,
                         std::string master_id)
    : redis_(redis),
      keys_(std::move(keys)),
      clock_(std::move(clock)),
      master_id_(std::move(master_id)) {}

std::int64_t WorkerStore::now_ms() const {
  return epoch_ms(clock_());
}

asio::awaitable<Expected<Registered, StoreError>> WorkerStore::add(
    api::WorkerRegistration registration) {
  const std::int64_t now = now_ms();
  const std::int64_t ttl_ms = registration.ttl ? registration.ttl->count() : 0;
  json headers = json::object();
  for (const auto& [k, v] : registration.headers) headers[k] = v;
  json doc = {{"url", registration.url},
              {"names", registration.names},
              {"concurrency", registration.concurrency},
              {"headers", headers},
              {"ttl_ms", ttl_ms},
              {"registered_at_ms", now},
              {"expires_at_ms", ttl_ms > 0 ? now + ttl_ms : 0}};
  if (!registration.ca_file.empty()) doc["ca_file"] = registration.ca_file;
  // Hex: JSON text cannot carry a secret that is not UTF-8. Absent: a registration is the whole
  // description, so registering the url again without a secret makes it unsigned.
  if (!registration.secret.empty()) doc["secret_hex"] = hex_encode(registration.secret);
  redis::ScriptCall call = RegisterWorker::call(
      RegisterWorker::keys(keys_), {registration.url, doc.dump(), keys_.control_channel()});
  auto reply = co_await redis_.eval(std::move(call));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  auto registered = RegisterWorker::decode(*reply);
  if (!registered) co_return unexpected(StoreError::bad_reply(registered.error()));
  co_return Registered{std::move(registered->id), registered->created};
}

asio::awaitable<Expected<void, StoreError>> WorkerStore::remove(std::string id) {
  drop_outcomes(id);  // else a later flush would bring its deleted counters back
  redis::ScriptCall call =
      RemoveWorker::call(RemoveWorker::keys(keys_, id), {id, keys_.control_channel()});
  auto reply = co_await redis_.eval(std::move(call));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  auto status = RemoveWorker::decode(*reply);
  if (!status) co_return unexpected(StoreError::bad_reply(status.error()));
  if (*status == RemoveWorker::Status::not_found) {
    co_return unexpected(StoreError{store::StoreErrc::not_found, "no worker " + id});
  }
  co_return Expected<void, StoreError>{};
}

asio::awaitable<Expected<std::vector<Endpoint>, StoreError>> WorkerStore::load_all() {
  std::vector<std::string> cmd{"HGETALL", keys_.workers()};
  auto reply = co_await redis_.command(std::move(cmd));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  std::vector<Endpoint> out;
  const auto now = now_ms();
  for (std::size_t i = 0; i + 1 < reply->elements.size(); i += 2) {
    auto e = decode_endpoint(reply->elements[i].str, reply->elements[i + 1].str);
    if (!e) {
      spdlog::warn("worker {} has an unreadable registration; ignoring it", reply->elements[i].str);
      continue;
    }
    if (e->expires_at_ms > 0 && e->expires_at_ms < now) continue;  // lapsed, not yet removed
    out.push_back(std::move(*e));
  }
  std::sort(out.begin(), out.end(), [](const Endpoint& a, const Endpoint& b) {
    return a.registered_at_ms != b.registered_at_ms ? a.registered_at_ms < b.registered_at_ms
                                                    : a.id < b.id;
  });
  co_return out;
}

asio::awaitable<Expected<std::vector<EndpointStats>, StoreError>> WorkerStore::stats(
    std::vector<std::string> ids) {
  std::vector<std::vector<std::string>> commands;
  for (const auto& id : ids) {
    commands.push_back({"HVALS", keys_.worker_slots(id)});
    commands.push_back({"HGETALL", keys_.worker_stats(id)});
  }
  std::vector<EndpointStats> out(ids.size());
  if (ids.empty()) co_return out;
  auto reply = co_await redis_.pipeline(std::move(commands));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  for (std::size_t i = 0; i < ids.size(); ++i) {
    EndpointStats& s = out[i];
    for (const auto& v : reply->elements[2 * i].elements) s.inflight += v.as_integer().value_or(0);
    const auto& fields = reply->elements[2 * i + 1].elements;
    for (std::size_t f = 0; f + 1 < fields.size(); f += 2) {
      const std::string& name = fields[f].str;
      const auto& value = fields[f + 1];
      if (name == "dispatched")
        s.dispatched = value.as_integer().value_or(0);
      else if (name == "succeeded")
        s.succeeded = value.as_integer().value_or(0);
      else if (name == "failed")
        s.failed = value.as_integer().value_or(0);
      else if (name == "last_error")
        s.last_error = value.str;
      else if (name == "down_until_ms")
        s.down_until_ms = value.as_integer().value_or(0);
      else if (name == "busy_until_ms")
        s.busy_until_ms = value.as_integer().value_or(0);
    }
    s.healthy = s.down_until_ms <= now_ms();
    if (s.busy_until_ms <= now_ms()) s.busy_until_ms = 0;
  }
  co_return out;
}

asio::awaitable<Expected<std::vector<EndpointView>, StoreError>> WorkerStore::load_with_stats() {
  co_await flush_outcomes();
  auto loaded = co_await load_all();
  if (!loaded) co_return unexpected(std::move(loaded.error()));
  std::vector<std::string> ids;
  for (const auto& e : *loaded) ids.push_back(e.id);
  auto stats = co_await this->stats(std::move(ids));
  if (!stats) co_return unexpected(std::move(stats.error()));
  std::vector<EndpointView> views;
  views.reserve(loaded->size());
  for (std::size_t i = 0; i < loaded->size(); ++i) {
    views.push_back(EndpointView{std::move((*loaded)[i]), std::move((*stats)[i])});
  }
  co_return views;
}

asio::awaitable<Expected<int, StoreError>> WorkerStore::acquire(std::string id, int want,
                                                                int concurrency) {
  if (shared_clock_ != nullptr && !shared_clock_->synced()) co_return 0;
  redis::ScriptCall call =
      AcquireSlots::call(AcquireSlots::keys(keys_, id),
                         {master_id_, want, concurrency, now_ms(), kHeartbeatTtl.count()});
  auto reply = co_await redis_.eval(std::move(call));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  auto granted = AcquireSlots::decode(*reply);
  if (!granted) co_return unexpected(StoreError::bad_reply(granted.error()));
  co_return static_cast<int>(*granted);
}

asio::awaitable<Expected<void, StoreError>> WorkerStore::release(std::string id, int n) {
  redis::ScriptCall call = ReleaseSlots::call(ReleaseSlots::keys(keys_, id), {master_id_, n});
  auto reply = co_await redis_.eval(std::move(call));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  co_return Expected<void, StoreError>{};
}

asio::awaitable<Expected<void, StoreError>> WorkerStore::set_slots(std::string id, int n) {
  redis::ScriptCall call =
      SetSlots::call(SetSlots::keys(keys_, id), {master_id_, n, now_ms(), kHeartbeatTtl.count()});
  auto reply = co_await redis_.eval(std::move(call));
  if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
  co_return Expected<void, StoreError>{};
}

void WorkerStore::drop_outcomes(const std::string& id) {
  std::lock_guard lock(outcomes_mutex_);
  outcomes_.erase(id);
}

void WorkerStore::record_outcome(const std::string& id, bool succeeded, std::string error) {
  std::lock_guard lock(outcomes_mutex_);
  Outcomes& o = outcomes_[id];
  ++(succeeded ? o.succeeded : o.failed);
  if (!error.empty()) o.last_error = std::move(error);
}

asio::awaitable<void> WorkerStore::flush_outcomes() {
  std::unordered_map<std::string, Outcomes> pending;
  {
    std::lock_guard lock(outcomes_mutex_);
    pending.swap(outcomes_);
  }
  if (pending.empty()) co_return;
  std::vector<UpdateWorkerStats::Worker> workers;
  workers.reserve(pending.size());
  for (auto& [id, o] : pending) {
    workers.push_back(UpdateWorkerStats::Worker{.id = id,
                                                .ended = o.succeeded + o.failed,
                                                .succeeded = o.succeeded,
                                                .failed = o.failed,
                                                .last_error = std::move(o.last_error)});
  }
  auto reply = co_await update_stats(std::move(workers));
  if (reply) co_return;
  if (auto held_back = flush_failures_.due()) {
    spdlog::warn("worker counters not recorded: {}{}", reply.error().message(),
                 *held_back == 0
                     ? std::string()
                     : fmt::format(" ({} more times since the last such line)", *held_back));
  }
}

asio::awaitable<void> WorkerStore::mark_down(std::string id, std::int64_t until_ms,
                                             std::string error) {
  // The list made apart: g++ 12 miscompiles a braced list in a co_await's arguments.
  std::vector<UpdateWorkerStats::Worker> marked{UpdateWorkerStats::Worker{
      .id = std::move(id), .last_error = std::move(error), .down_until_ms = until_ms}};
  co_await update_stats(std::move(marked));
}

asio::awaitable<void> WorkerStore::mark_busy(std::string id, std::int64_t until_ms) {
  std::vector<UpdateWorkerStats::Worker> marked{
      UpdateWorkerStats::Worker{.id = std::move(id), .busy_until_ms = until_ms}};
  co_await update_stats(std::move(marked));
}

asio::awaitable<redis::ReplyResult> WorkerStore::update_stats(
    std::vector<UpdateWorkerStats::Worker> workers) {
  redis::ScriptCall call =
      UpdateWorkerStats::call(UpdateWorkerStats::keys(keys_), {std::move(workers)});
  co_return co_await redis_.eval(std::move(call));
}

asio::awaitable<WorkerStore::Heartbeat> WorkerStore::heartbeat() {
  const std::int64_t now = now_ms();
  redis::ScriptCall call = BeatMaster::call(
      BeatMaster::keys(keys_),
      {master_id_, now + kHeartbeatTtl.count(), std::string(redis::library_name())});
  auto reply = co_await redis_.eval(std::move(call));
  if (!reply) co_return Heartbeat{};
  const auto beat = BeatMaster::decode(*reply);
  if (!beat) co_return Heartbeat{};
  // The first beat has nothing before it; after that, none (the masters set was cleared), one
  // already past, or a gap since this master's own last beat longer than the ttl (a beat of
  // acquireSlots may have hidden the lapse from Redis's record) is a lapse.
  const bool lapsed = last_beat_ms_ > 0 && (beat->before_ms == 0 || beat->before_ms < now ||
                                            now - last_beat_ms_ > kHeartbeatTtl.count());
  last_beat_ms_ = now;
  co_return Heartbeat{.recorded = true, .lapsed = lapsed, .redis_us = beat->redis_us};
}

asio::awaitable<void> WorkerStore::expire() {
  redis::ScriptCall call =
      ExpireWorkers::call(ExpireWorkers::keys(keys_), {now_ms(), keys_.control_channel()});
  auto reply = co_await redis_.eval(std::move(call));
  if (!reply) co_return;
  auto removed = ExpireWorkers::decode(*reply);
  if (!removed) {
    spdlog::error("{}", removed.error().message());
    co_return;
  }
  // The script deleted their slot leases and counters too; those not yet flushed go here.
  for (const std::string& id : *removed) {
    spdlog::info("worker {} lapsed: no heartbeat within its ttl", id);
    drop_outcomes(id);
  }
}

}  // namespace jq::workers
