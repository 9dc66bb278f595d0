// The key schema: every key of a shard carries that shard's hash tag, under the prefix. The keys
// the scripts derive themselves (record buckets, ready lists) are checked against the scripts in
// tests/redis/key_derivation_test.cpp.
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

#include "src/redis/keys.hpp"
#include "src/redis/slot.hpp"

using jq::redis::Keys;

namespace {

// The part of a key Redis Cluster hashes: between the first '{' and the next '}'.
std::string hash_tag(const std::string& key) {
  auto open = key.find('{');
  if (open == std::string::npos) return {};
  auto close = key.find('}', open + 1);
  if (close == std::string::npos || close == open + 1) return {};
  return key.substr(open + 1, close - open - 1);
}

std::vector<std::string> shard_keys(const Keys& keys, int shard) {
  return {keys.stats(shard),          keys.jobs_prefix(shard),
          keys.names(shard),          keys.ready_prefix(shard),
          keys.ready(shard, "email"), keys.scheduled(shard),
          keys.inflight(shard),       keys.dead(shard),
          keys.done_prefix(shard),    keys.done(shard, "00000000A"),
          keys.counts(shard),         keys.schedules(shard),
          keys.schedule_homes(shard), keys.schedule_tombstones(shard),
          keys.watch_prefix(shard),   keys.watch(shard, "00000000A")};
}

std::vector<std::string> control_keys(const Keys& keys) {
  return {keys.workers(), keys.worker_urls(),      keys.worker_seq(), keys.worker_slots("w1"),
          keys.masters(), keys.worker_stats("w1"), keys.paused()};
}

}  // namespace

TEST_CASE("every key of a shard carries the prefix and the shard's hash tag", "[unit]") {
  const Keys keys("myapp");
  for (int shard : {0, 7, 15, 1023}) {
    for (const std::string& key : shard_keys(keys, shard)) {
      INFO(key);
      CHECK(key.starts_with("myapp:{" + std::to_string(shard) + "}:"));
      CHECK(hash_tag(key) == std::to_string(shard));
    }
  }
}

TEST_CASE("the keys of one shard are all different", "[unit]") {
  const Keys keys("jq");
  auto all = shard_keys(keys, 3);
  CHECK(std::set<std::string>(all.begin(), all.end()).size() == all.size());
}

TEST_CASE("the same key of different shards differs", "[unit]") {
  const Keys keys("jq");
  auto zero = shard_keys(keys, 0);
  auto one = shard_keys(keys, 1);
  auto eleven = shard_keys(keys, 11);
  for (std::size_t i = 0; i < zero.size(); ++i) {
    CHECK(zero[i] != one[i]);
    CHECK(one[i] != eleven[i]);
  }
}

TEST_CASE("a name's ready queue is the shard's ready prefix followed by the name", "[unit]") {
  const Keys keys("jq");
  CHECK(keys.ready(4, "email") == keys.ready_prefix(4) + "email");
  CHECK(keys.ready(4, "a:b{c}") == keys.ready_prefix(4) + "a:b{c}");
  CHECK(keys.ready(4, "email") != keys.ready(4, "resize"));
  CHECK(keys.ready_prefix(4) == "jq:{4}:ready:");
}

TEST_CASE("a job's done key ends with its field", "[unit]") {
  const Keys keys("jq");
  CHECK(keys.done(2, "00000000A") == "jq:{2}:done:00000000A");
  CHECK(keys.done(2, "00000000A") != keys.done(2, "00000000B"));
}

TEST_CASE("a job's done key is the shard's done prefix followed by its field", "[unit]") {
  const Keys keys("jq");
  CHECK(keys.done(5, "00000000A") == keys.done_prefix(5) + "00000000A");
  CHECK(keys.done_prefix(5) == "jq:{5}:done:");
}

TEST_CASE("a job's watch key is the shard's watch prefix followed by its field", "[unit]") {
  const Keys keys("jq");
  CHECK(keys.watch(5, "00000000A") == keys.watch_prefix(5) + "00000000A");
  CHECK(keys.watch_prefix(5) == "jq:{5}:watch:");
  CHECK(keys.watch(5, "00000000A") != keys.done(5, "00000000A"));
}

TEST_CASE("the handshake's probe names two keys below the prefix, in two hash slots", "[unit]") {
  const Keys keys("jq");
  CHECK(keys.span_probe_a().starts_with("jq:"));
  CHECK(keys.span_probe_b().starts_with("jq:"));
  CHECK(jq::redis::key_slot(keys.span_probe_a()) != jq::redis::key_slot(keys.span_probe_b()));
}

TEST_CASE("a shard's counts hash is its own key", "[unit]") {
  CHECK(Keys("jq").counts(3) == "jq:{3}:counts");
  CHECK(Keys("jq").counts(3) != Keys("jq").counts(4));
}

TEST_CASE("control-plane keys share the hash tag {w} under the prefix and all differ", "[unit]") {
  const Keys keys("myapp");
  auto all = control_keys(keys);
  for (const std::string& key : all) {
    INFO(key);
    CHECK(key.starts_with("myapp:{w}:"));
    CHECK(hash_tag(key) == "w");
  }
  CHECK(std::set<std::string>(all.begin(), all.end()).size() == all.size());
  CHECK(keys.workers() == "myapp:{w}:workers");
  CHECK(keys.worker_urls() == "myapp:{w}:worker_urls");
  CHECK(keys.worker_seq() == "myapp:{w}:worker_seq");
  CHECK(keys.masters() == "myapp:{w}:masters");
  CHECK(keys.paused() == "myapp:{w}:paused");
}

TEST_CASE("a worker's slots and stats keys end with its id", "[unit]") {
  const Keys keys("jq");
  CHECK(keys.worker_slots("w12") == "jq:{w}:slots:w12");
  CHECK(keys.worker_stats("w12") == "jq:{w}:wstats:w12");
  CHECK(keys.worker_slots("w1") != keys.worker_slots("w2"));
  CHECK(keys.worker_stats("w1") != keys.worker_stats("w2"));
}

TEST_CASE("each events channel is in the slot of the keys whose scripts publish on it", "[unit]") {
  CHECK(Keys("jq").events_channel(7) == "jq:{7}:events");
  CHECK(Keys("other").events_channel(0) == "other:{0}:events");
  CHECK(hash_tag(Keys("jq").events_channel(7)) == hash_tag(Keys("jq").inflight(7)));
  CHECK(hash_tag(Keys("jq").control_channel()) == hash_tag(Keys("jq").workers()));
  CHECK(hash_tag(Keys("jq").constraint_channel()) == hash_tag(Keys("jq").constraints()));
  const auto all = Keys("jq").all_channels(3);
  CHECK(all == std::vector<std::string>{"jq:{0}:events", "jq:{1}:events", "jq:{2}:events",
                                        "jq:{w}:events", "jq:{c}:events"});
}

TEST_CASE("the meta key is global and keys follow the prefix", "[unit]") {
  // A named default: g++ 12 -O2 warns (maybe-uninitialized, a false positive) on a temporary's.
  const Keys defaults;
  CHECK(defaults.prefix() == "jq");
  CHECK(defaults.meta() == "jq:meta");
  CHECK(Keys("other").meta() == "other:meta");
  CHECK(Keys("other").jobs_prefix(0) != Keys("jq").jobs_prefix(0));
  CHECK(hash_tag(Keys("jq").meta()).empty());
}

TEST_CASE("constraint keys share the hash tag {c} under the prefix and all differ", "[unit]") {
  const Keys keys("myapp");
  const std::vector<std::string> all = {keys.constraints(),
                                        keys.constraints_version(),
                                        keys.constraint_counters(),
                                        keys.constraint_lease_keys("mail"),
                                        keys.constraint_lease("mail", "acme"),
                                        keys.constraint_tat("mail", "acme")};
  for (const std::string& key : all) {
    INFO(key);
    CHECK(key.starts_with("myapp:{c}:"));
    CHECK(hash_tag(key) == "c");
  }
  CHECK(std::set<std::string>(all.begin(), all.end()).size() == all.size());
  CHECK(keys.constraints() == "myapp:{c}:constraints");
  CHECK(keys.constraints_version() == "myapp:{c}:constraints_version");
  CHECK(keys.constraint_lease_keys("mail") == "myapp:{c}:lease_keys:mail");
  CHECK(keys.constraint_lease_keys("mail") == keys.constraint_lease_keys_prefix() + "mail");
  // The dispatch scripts name the counters hash from the state prefix themselves.
  CHECK(keys.constraint_counters() == keys.constraint_state_prefix() + "counters");
}

TEST_CASE(
    "a shard's held jobs live under its own hash tag, below the prefix the scripts derive from",
    "[unit]") {
  const Keys keys("myapp");
  CHECK(keys.held_prefix(3) == "myapp:{3}:c:");
  CHECK(hash_tag(keys.held_prefix(3)) == "3");
  // The scripts name these below the prefix themselves (lua/lib/preamble_1_holds_of.lua).
  CHECK(keys.held_waiting(3, "mail") == keys.held_prefix(3) + "waiting:mail");
  CHECK(keys.held_tallies(3) == keys.held_prefix(3) + "tallies");
  CHECK(keys.held_prefix(3) != keys.held_prefix(4));
}

TEST_CASE("a constraint key's lease and tat keys are its name, '#' and the key", "[unit]") {
  const Keys keys("jq");
  CHECK(keys.constraint_lease("mail", "acme") == "jq:{c}:lease:mail#acme");
  CHECK(keys.constraint_lease("mail", "acme") == keys.constraint_leases("mail") + "acme");
  CHECK(keys.constraint_leases("mail") == keys.constraint_lease_prefix() + "mail#");
  CHECK(keys.constraint_tat("mail", "acme") == "jq:{c}:tat:mail#acme");
  CHECK(keys.constraint_tat("mail", "acme") == keys.constraint_tats("mail") + "acme");
  CHECK(keys.constraint_tats("mail") == keys.constraint_tat_prefix() + "mail#");
  // Names never hold '#', so a ':' in a name or a key cannot make two pairs share a key.
  CHECK(keys.constraint_lease("a:b", "c") != keys.constraint_lease("a", "b:c"));
  CHECK(keys.constraint_lease("mail", "") == "jq:{c}:lease:mail#");
}
