// Shared by the [redis] tests that put jobs under constraints: definitions written as the API
// stores them, jobs that matched them, the master's steps between the scripts (as
// src/store/admission.cpp and src/store/handoff.cpp take them), and the state keys.
// With JQ_TEST_JOINED_STEPS set, take() and complete() run the steps under {c} joined into
// reserveJobs and completeJobs, as DispatchStore does on one Redis (store::ConstraintSteps),
// so the same tests check both ways.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/store/attempt_lease.hpp"
#include "tests/redis/script_test_support.hpp"

namespace jq::test {

using redis::bindings::AckWake;
using redis::bindings::AdmitJobs;
using redis::bindings::CompleteJobs;
using redis::bindings::HoldJobs;
using redis::bindings::ReleaseLeases;
using redis::bindings::UnholdJobs;
using redis::bindings::WakeConstraints;
using redis::bindings::WakeOrder;

inline std::string packed(const nlohmann::json& value) {
  const std::vector<std::uint8_t> bytes = nlohmann::json::to_msgpack(value);
  return std::string(bytes.begin(), bytes.end());
}

// A definition as the API stores it (api::encode_constraint): only what the scripts read.
inline void define(SyncRedis& r, const redis::Keys& keys, const std::string& name,
                   nlohmann::json limits) {
  limits["name"] = name;
  if (!limits.contains("paused")) limits["paused"] = false;
  r.call({"HSET", keys.constraints(), name, packed(limits)});
}

inline PushArgs constrained(const std::string& name, const std::string& key) {
  PushArgs job;
  job.constraints = packed(nlohmann::json::array({name, key}));
  return job;
}

inline bool joined_steps() {
  const char* v = std::getenv("JQ_TEST_JOINED_STEPS");
  return v != nullptr && *v != '\0' && std::string_view(v) != "0";
}

struct Taken {
  std::string field;
  store::JobRecord record;
};

// reserveJobs: the jobs taken from queue "email" of `shard`, candidates included.
inline std::vector<Taken> reserve(SyncRedis& r, const redis::Keys& keys, int shard, int max,
                                  std::int64_t now_ms) {
  redis::Reply taken = reserve_jobs(r, keys, shard, "email", max, now_ms);
  std::vector<Taken> out;
  for (std::size_t i = 0; i < taken.elements.size(); i += 2) {
    auto record = store::decode_record(taken.elements[i + 1].str);
    REQUIRE(record);
    out.push_back({taken.elements[i].str, std::move(*record)});
  }
  return out;
}

inline std::string lease_of(int shard, const std::string& field, int attempt = 1) {
  return std::to_string(shard) + "-" + field + ":" + std::to_string(attempt);
}

// admitJobs for the candidates among `taken`: one answer per candidate.
inline std::vector<std::int64_t> admit(SyncRedis& r, const redis::Keys& keys, int shard,
                                       const std::vector<Taken>& taken, std::int64_t now_ms) {
  AdmitJobs::Args args{now_ms, {}};
  for (const Taken& t : taken) {
    auto lease = store::attempt_lease({shard, t.field}, t.record.attempts, t.record.constraints);
    if (!lease) continue;
    args.jobs.push_back({shard, lease->lease, t.record.ready_stamp, now_ms + t.record.timeout_ms,
                         lease->constraints});
  }
  const std::size_t n = args.jobs.size();
  auto out = AdmitJobs::decode(r.eval(AdmitJobs::call(AdmitJobs::keys(keys), std::move(args))), n);
  REQUIRE(out);
  return *out;
}

inline std::vector<HoldJobs::Status> hold(SyncRedis& r, const redis::Keys& keys, int shard,
                                          std::vector<HoldJobs::Job> jobs) {
  const std::size_t n = jobs.size();
  auto out =
      HoldJobs::decode(r.eval(HoldJobs::call(HoldJobs::keys(keys, shard), {std::move(jobs)})), n);
  REQUIRE(out);
  return *out;
}

// What DispatchStore::reserve dispatches on one Redis: reserveJobs admitting (or holding) the
// constrained jobs in its own step.
inline std::vector<std::string> take_joined(SyncRedis& r, const redis::Keys& keys, int max = 10,
                                            std::int64_t now_ms = kNowMs, int shard = 0) {
  using redis::bindings::ReserveJobs;
  auto reply = ReserveJobs::decode(r.eval(ReserveJobs::call(
      ReserveJobs::keys(keys, shard, "email", true), {now_ms, max, {}, "", "email", shard, "t"})));
  REQUIRE(reply);
  std::vector<std::string> started;
  for (const auto& t : reply->jobs) started.push_back(t.field);
  return started;
}

// What DispatchStore::reserve dispatches: reserveJobs, then admitJobs for the candidates and
// holdJobs for the refused ones (or take_joined, with the steps joined).
inline std::vector<std::string> take(SyncRedis& r, const redis::Keys& keys, int max = 10,
                                     std::int64_t now_ms = kNowMs, int shard = 0) {
  if (joined_steps()) return take_joined(r, keys, max, now_ms, shard);
  const std::vector<Taken> taken = reserve(r, keys, shard, max, now_ms);
  const std::vector<std::int64_t> answers = admit(r, keys, shard, taken, now_ms);
  std::vector<std::string> started;
  std::vector<HoldJobs::Job> refused;
  std::size_t c = 0;
  for (const Taken& t : taken) {
    if (t.record.constraints.empty()) {
      started.push_back(t.field);
      continue;
    }
    const std::int64_t pair = answers[c++];
    if (pair == 0) {
      started.push_back(t.field);
    } else {
      const auto i = static_cast<std::size_t>(2 * (pair - 1));
      refused.push_back(
          {t.field, t.record.attempts, t.record.constraints[i], t.record.constraints[i + 1]});
    }
  }
  if (!refused.empty()) hold(r, keys, shard, refused);
  return started;
}

inline UnholdJobs::Unheld unhold(SyncRedis& r, const redis::Keys& keys, const WakeOrder& order) {
  auto out = UnholdJobs::decode(
      r.eval(UnholdJobs::call(UnholdJobs::keys(keys, static_cast<int>(order.shard)), order)));
  REQUIRE(out);
  return *out;
}

inline std::vector<WakeOrder> ack(SyncRedis& r, const redis::Keys& keys, const WakeOrder& order,
                                  const UnholdJobs::Unheld& found, std::int64_t now_ms = kNowMs) {
  auto out = AckWake::decode(r.eval(AckWake::call(
      AckWake::keys(keys), {now_ms, order, found.woken, found.oldest, found.settled, found.at})));
  REQUIRE(out);
  return *out;
}

// What Handoff::run does: every order unheld in its shard and acknowledged, until none is left.
// Returns how many jobs woke.
inline std::int64_t hand_off(SyncRedis& r, const redis::Keys& keys, std::vector<WakeOrder> orders,
                             std::int64_t now_ms = kNowMs) {
  std::int64_t woken = 0;
  for (int round = 0; !orders.empty(); ++round) {
    REQUIRE(round < 100);
    std::vector<WakeOrder> more;
    for (const WakeOrder& o : orders) {
      const auto found = unhold(r, keys, o);
      woken += found.woken;
      for (WakeOrder& m : ack(r, keys, o, found, now_ms)) more.push_back(std::move(m));
    }
    orders = std::move(more);
  }
  return woken;
}

// releaseLeases; `joined`: with shard 0's keys, so it runs the wake orders itself (one Redis).
inline std::vector<WakeOrder> release(SyncRedis& r, const redis::Keys& keys,
                                      std::vector<ReleaseLeases::Lease> leases,
                                      std::int64_t now_ms = kNowMs, bool joined = false) {
  auto out = ReleaseLeases::decode(r.eval(
      ReleaseLeases::call(joined ? ReleaseLeases::joined_keys(keys) : ReleaseLeases::keys(keys),
                          {now_ms, std::move(leases)})));
  REQUIRE(out);
  return *out;
}

// A success of attempt 1 of `field` in shard 0, and its leases (`constraints`: its record's
// R_CONSTRAINTS, MessagePack; "" for none) given back: the wake orders (none with the steps
// joined: completeJobs ran them).
inline std::vector<WakeOrder> complete(SyncRedis& r, const redis::Keys& keys,
                                       const std::string& field,
                                       const std::string& constraints = "") {
  CompleteJobs::Args args{3600, keys.events_channel(0), 0, kNowMs, {{field, 1, "\xc0"}}};
  auto status = CompleteJobs::decode(
      r.eval(CompleteJobs::call(CompleteJobs::keys(keys, 0, joined_steps()), std::move(args))), 1);
  REQUIRE(status);
  REQUIRE(status->front() == CompleteJobs::Status::done);
  if (joined_steps()) return {};  // released, and the slots handed on, by completeJobs itself
  if (constraints.empty()) return {};
  return release(r, keys, {{lease_of(0, field), constraints}});
}

// wakeConstraints; `joined`: with shard 0's keys, so it runs the wake orders itself (one Redis).
inline WakeConstraints::Due wake_due(SyncRedis& r, const redis::Keys& keys,
                                     std::int64_t now_ms = kNowMs, bool joined = false) {
  auto out = WakeConstraints::decode(r.eval(WakeConstraints::call(
      joined ? WakeConstraints::joined_keys(keys) : WakeConstraints::keys(keys), {now_ms, 100})));
  REQUIRE(out);
  return *out;
}

inline std::string c_key(const redis::Keys& keys, const std::string& kind, const std::string& name,
                         const std::string& key) {
  return keys.constraint_state_prefix() + kind + ":" + name + "#" + key;
}

inline std::string held_key(const redis::Keys& keys, int shard, const std::string& name,
                            const std::string& key) {
  return keys.held_prefix(shard) + "held:" + name + "#" + key;
}

inline std::vector<std::string> zmembers(SyncRedis& r, const std::string& key) {
  std::vector<std::string> out;
  for (const redis::Reply& e : r.call({"ZRANGE", key, "0", "-1"}).elements) out.push_back(e.str);
  return out;
}

inline std::string wake_due_key(const redis::Keys& keys) {
  return keys.constraint_state_prefix() + "wake_due";
}

}  // namespace jq::test
