// pushJobs-10.lua: a batch of jobs stored in one shard and made ready, in order.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <limits>
#include <set>

#include "tests/redis/script_test_support.hpp"

using namespace jq::test;
using jq::store::JobState;

namespace {

std::vector<std::string> members_of(const std::vector<std::pair<std::string, std::int64_t>>& z) {
  std::vector<std::string> out;
  for (const auto& [member, score] : z) out.push_back(member);
  return out;
}

}  // namespace

TEST_CASE("pushJobs stores a batch in order and returns increasing 9-character fields", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto fields = fields_of(push_jobs(r, keys, 0, {{.name = "a"}, {.name = "b"}, {.name = "c"}}));

  REQUIRE(fields.size() == 3);
  CHECK(fields[0] == "000000001");
  for (const std::string& f : fields) {
    CHECK(f.size() == 9);
    CHECK(std::all_of(f.begin(), f.end(), [](unsigned char c) { return std::isalnum(c); }));
  }
  CHECK(fields[0] < fields[1]);
  CHECK(fields[1] < fields[2]);
  CHECK(read_record(r, keys, 0, fields[0])->name == "a");
  CHECK(read_record(r, keys, 0, fields[1])->name == "b");
  CHECK(read_record(r, keys, 0, fields[2])->name == "c");
}

TEST_CASE("a batch across record buckets stores every job under its own field", "[redis]") {
  // Fields follow the shard's seq; 62 of them share a bucket (their first eight characters),
  // which the script names once per bucket.
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  push_jobs(r, keys, 0, std::vector<PushArgs>(60, PushArgs{.name = "w"}));  // seq 1-60
  std::vector<PushArgs> batch;
  for (int i = 0; i < 130; ++i) {
    PushArgs job{.name = "n" + std::to_string(i)};
    if (i == 70) job.unique_key = "u";  // a job in thirteen arguments among them
    batch.push_back(job);
  }
  auto f = fields_of(push_jobs(r, keys, 0, batch));
  REQUIRE(f.size() == 130);
  for (std::size_t i = 0; i < f.size(); ++i) {
    INFO("job " << i);
    CHECK(f[i] == base62(61 + static_cast<std::int64_t>(i), 9));
    auto record = read_record(r, keys, 0, f[i]);
    REQUIRE(record);
    CHECK(record->name == "n" + std::to_string(i));
  }
  CHECK(read_record(r, keys, 0, f[70])->unique_key == "u");
}

TEST_CASE("pushJobs records hold every field given, queued with no attempts", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const std::string binary("\x00\r\n\xff\xc1 bytes\x00", 12);
  auto fields = fields_of(
      push_jobs(r, keys, 2,
                {{"resize", binary, std::numeric_limits<std::int32_t>::min(), 0, true, 1},
                 {"email", "", std::numeric_limits<std::int32_t>::max(), 25, false, 86400000}}));
  REQUIRE(fields.size() == 2);

  auto first = read_record(r, keys, 2, fields[0]);
  REQUIRE(first);
  CHECK(first->name == "resize");
  CHECK(first->argument == binary);
  CHECK(first->priority == std::numeric_limits<std::int32_t>::min());
  CHECK(first->max_retry == 0);
  CHECK(first->keep_result);
  CHECK(first->timeout_ms == 1);
  CHECK(first->state == JobState::queued);
  CHECK(first->attempts == 0);
  CHECK(first->enqueued_at_ms == kNowMs);
  CHECK(first->last_error.empty());
  CHECK(first->traceparent.empty());
  CHECK(first->result.empty());

  auto second = read_record(r, keys, 2, fields[1]);
  REQUIRE(second);
  CHECK(second->name == "email");
  CHECK(second->argument.empty());
  CHECK(second->priority == std::numeric_limits<std::int32_t>::max());
  CHECK(second->max_retry == 25);
  CHECK_FALSE(second->keep_result);
  CHECK(second->timeout_ms == 86400000);
  CHECK(second->state == JobState::queued);
}

TEST_CASE("a record leaves out its trailing slots that hold nothing, so buckets stay compact",
          "[redis]") {
  // A plain job with a 16-byte argument (what the memory benchmark pushes) packs in under 64
  // bytes, Redis's default hash-max-listpack-value: its bucket stays a listpack.
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = fields_of(push_jobs(r, keys, 0,
                               {{.name = "bench", .argument = "\xb0" + std::string(16, 'x')},
                                {.name = "bench", .unique_key = "u1"}}));
  const auto plain = raw_record(r, keys, 0, f[0]);
  REQUIRE(plain);
  CHECK(static_cast<unsigned char>(plain->front()) == 0x90 + 13);  // fixarray of 13
  CHECK(plain->size() < 64);
  CHECK(r.call({"OBJECT", "ENCODING", record_at(r, keys, 0, f[0]).bucket}).str == "listpack");
  // A later slot that holds something keeps the slots before it.
  const auto unique = read_record(r, keys, 0, f[1]);
  REQUIRE(unique);
  CHECK(unique->unique_key == "u1");
}

TEST_CASE("plain jobs (four arguments) and other jobs (thirteen) interleave in one batch",
          "[redis]") {
  // The master sends each job in the shape it has; the script walks the shapes to find each
  // job's arguments, so a mistake in one shifts every job after it.
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const std::string constraints = "\x92\xa6tenant\xa1x";  // ["tenant", "x"]
  auto f = fields_of(push_jobs(
      r, keys, 0,
      {{.name = "a", .priority = 2, .timeout_ms = 7000},
       {.name = "a", .ready_at_ms = kNowMs + 1000},
       {.name = "a", .argument = "\x01", .priority = 2, .max_retry = 9, .keep_result = true},
       {.name = "a", .unique_key = "u", .unique_until_started = true},
       {.name = "a", .priority = 1, .constraints = constraints},
       {.name = "a", .ordering_key = "o"}}));
  REQUIRE(f.size() == 6);

  auto first = read_record(r, keys, 0, f[0]);
  REQUIRE(first);
  CHECK(first->priority == 2);
  CHECK(first->timeout_ms == 7000);
  CHECK(read_record(r, keys, 0, f[1])->state == JobState::scheduled);
  auto third = read_record(r, keys, 0, f[2]);
  REQUIRE(third);
  CHECK(third->argument == "\x01");
  CHECK(third->max_retry == 9);
  CHECK(third->keep_result);
  CHECK(third->unique_key.empty());
  CHECK(read_record(r, keys, 0, f[3])->unique_key == "u");
  auto fifth = read_record(r, keys, 0, f[4]);
  REQUIRE(fifth);
  CHECK(fifth->priority == 1);
  CHECK(fifth->constraints == std::vector<std::string>{"tenant", "x"});
  CHECK(read_record(r, keys, 0, f[5])->ordering_key == "o");
  // Ready by priority (0 for the unique and the ordered job), in push order within one.
  CHECK(members_of(ready_queue(r, keys, 0, "a")) ==
        std::vector<std::string>{member_of(r, keys, 0, f[3]), member_of(r, keys, 0, f[5]),
                                 member_of(r, keys, 0, f[4]), member_of(r, keys, 0, f[0]),
                                 member_of(r, keys, 0, f[2])});
}

TEST_CASE("a plain job's record packed by the master is what the script packs for it", "[redis]") {
  // Sent in four arguments, a plain job's record is the master's; sent in thirteen, the script
  // packs it from a table. Another form of the same values would still be read, but a record
  // could outgrow hash-max-listpack-value and take more memory.
  using jq::redis::bindings::PushJobs;
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const std::string constraints = "\x92\xa6tenant\xa1x";  // ["tenant", "x"]
  const std::string trace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  for (const std::string& matched : {std::string(), constraints}) {
    for (const std::string& traceparent : {std::string(), trace}) {
      INFO("constraints: " << matched.size() << " bytes, traceparent: " << traceparent);
      const PushArgs job{.name = "a", .priority = -3, .keep_result = true, .constraints = matched};
      auto four = fields_of(push_jobs(r, keys, 0, {job}, kNowMs, kStampUs, traceparent));
      PushJobs::Args args{
          kNowMs, kStampUs, keys.events_channel(0), traceparent, 0, kMaxListBytes, "", {}, {}};
      args.jobs.push_back({job.name,
                           job.argument,
                           job.priority,
                           job.max_retry,
                           job.keep_result,
                           job.timeout_ms,
                           0,
                           "",
                           false,
                           job.unique_for_ms,
                           "",
                           matched,
                           {}});
      jq::redis::ScriptCall call = PushJobs::call(PushJobs::keys(keys, 0), std::move(args));
      REQUIRE(call.args.size() == PushJobs::arg_names.size() + PushJobs::args_per_item);
      REQUIRE(call.args[7] == "p");
      // The same job in thirteen, as a job with a unique key or a delay is sent.
      call.args[7] = "f";
      call.args.resize(PushJobs::arg_names.size() + 1);  // its name
      call.args.push_back(jq::redis::record_head(
          {job.name, job.argument, job.priority, job.max_retry, job.keep_result, job.timeout_ms}));
      for (const std::string& v :
           {std::string("-3"), std::string("3"), std::string("1"), std::string("30000"),
            std::string("0"), std::string(), std::string("0"), std::string("86400000"),
            std::string(), matched, std::string("0")}) {
        call.args.push_back(v);
      }
      auto thirteen = fields_of(r.eval(call));
      REQUIRE(four.size() == 1);
      REQUIRE(thirteen.size() == 1);
      CHECK(raw_record(r, keys, 0, thirteen[0]) == raw_record(r, keys, 0, four[0]));
    }
  }
}

TEST_CASE("every job of a batch keeps the batch's traceparent", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const std::string trace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  auto traced =
      fields_of(push_jobs(r, keys, 0, {{.name = "a"}, {.name = "b"}}, kNowMs, kStampUs, trace));
  auto plain = fields_of(push_jobs(r, keys, 0, {{.name = "c"}}, kNowMs, kStampUs + 1));
  REQUIRE(traced.size() == 2);
  REQUIRE(plain.size() == 1);

  for (const std::string& field : traced) {
    auto record = read_record(r, keys, 0, field);
    REQUIRE(record);
    CHECK(record->traceparent == trace);
    CHECK(record->last_error.empty());
    CHECK(record->result.empty());
  }
  CHECK(read_record(r, keys, 0, traced[1])->name == "b");
  CHECK(read_record(r, keys, 0, plain[0])->traceparent.empty());
}

TEST_CASE("every pushed job is in its ready queue under the member its record names", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto fields = fields_of(push_jobs(r, keys, 1, {{.priority = -7}, {.priority = 9}}));

  auto ready = ready_queue(r, keys, 1, "email");
  REQUIRE(ready.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    const std::string member = member_of(r, keys, 1, fields[i]);
    CHECK(member.size() == 18);
    CHECK(member.substr(9) == fields[i]);
    CHECK(ready[i].first == member);
  }
  CHECK(ready[0].second == -7);
  CHECK(ready[1].second == 9);
}

TEST_CASE("the ready queue orders by priority, then push order among equal priorities", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = fields_of(push_jobs(r, keys, 0,
                               {{.priority = 5},
                                {.priority = 1},
                                {.priority = 5},
                                {.priority = 1},
                                {.priority = std::numeric_limits<std::int32_t>::min()}}));
  REQUIRE(f.size() == 5);

  auto ready = ready_queue(r, keys, 0, "email");
  REQUIRE(ready.size() == 5);
  std::vector<std::string> order;
  for (const auto& [member, score] : ready) order.push_back(member.substr(9));
  CHECK(order == std::vector<std::string>{f[4], f[1], f[3], f[0], f[2]});
  CHECK(ready[0].second == std::numeric_limits<std::int32_t>::min());
}

TEST_CASE("a later push with a larger ready stamp sorts after earlier jobs of equal priority",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto early = fields_of(push_jobs(r, keys, 0, {{}, {}}, kNowMs, kStampUs));
  auto late = fields_of(push_jobs(r, keys, 0, {{}}, kNowMs, kStampUs + 1));
  auto urgent = fields_of(push_jobs(r, keys, 0, {{.priority = -1}}, kNowMs, kStampUs + 2));

  std::vector<std::string> order;
  for (const auto& [member, score] : ready_queue(r, keys, 0, "email")) {
    order.push_back(member.substr(9));
  }
  CHECK(order == std::vector<std::string>{urgent[0], early[0], early[1], late[0]});
}

TEST_CASE("within a shard the list keeps push order, members compare by their stamps as numbers",
          "[redis]") {
  // Stamps picked so that their decimal texts would sort the other way round: members compare
  // as numbers (fixed-width base62), which is how the scheduler orders the heads of shards.
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto ten = fields_of(push_jobs(r, keys, 0, {{}}, kNowMs, 10));
  auto nine = fields_of(push_jobs(r, keys, 0, {{}}, kNowMs, 9));
  auto sixty_two = fields_of(push_jobs(r, keys, 0, {{}}, kNowMs, 62));
  auto sixty_one = fields_of(push_jobs(r, keys, 0, {{}}, kNowMs, 61));

  CHECK(members_of(ready_queue(r, keys, 0, "email")) ==
        std::vector<std::string>{member_of(r, keys, 0, ten[0]), member_of(r, keys, 0, nine[0]),
                                 member_of(r, keys, 0, sixty_two[0]),
                                 member_of(r, keys, 0, sixty_one[0])});
  CHECK(member_of(r, keys, 0, nine[0]) < member_of(r, keys, 0, ten[0]));
  CHECK(member_of(r, keys, 0, sixty_one[0]) < member_of(r, keys, 0, sixty_two[0]));
  CHECK(member_of(r, keys, 0, ten[0]) < member_of(r, keys, 0, sixty_one[0]));
}

TEST_CASE("fields keep increasing across a base62 digit boundary", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  r.call({"HSET", keys.stats(0), "seq", "59"});
  auto f = fields_of(push_jobs(r, keys, 0, {{}, {}, {}}));
  CHECK(f == std::vector<std::string>{"00000000y", "00000000z", "000000010"});
  CHECK(std::is_sorted(f.begin(), f.end()));
  // Equal priorities and stamps: push order comes from the field.
  std::vector<std::string> order;
  for (const auto& [member, score] : ready_queue(r, keys, 0, "email")) {
    order.push_back(member.substr(9));
  }
  CHECK(order == f);
}

TEST_CASE("jobs of different names go to their own ready queues and the names set", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f =
      fields_of(push_jobs(r, keys, 3, {{.name = "email"}, {.name = "resize"}, {.name = "email"}}));

  auto email = ready_queue(r, keys, 3, "email");
  auto resize = ready_queue(r, keys, 3, "resize");
  REQUIRE(email.size() == 2);
  REQUIRE(resize.size() == 1);
  CHECK(email[0].first.substr(9) == f[0]);
  CHECK(email[1].first.substr(9) == f[2]);
  CHECK(resize[0].first.substr(9) == f[1]);

  auto names = r.call({"SMEMBERS", keys.names(3)});
  std::set<std::string> got;
  for (const auto& e : names.elements) got.insert(e.str);
  CHECK(got == std::set<std::string>{"email", "resize"});
}

TEST_CASE("pushJobs counts pushed jobs and continues the sequence across batches", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto first = fields_of(push_jobs(r, keys, 0, {{}, {}}));
  auto second = fields_of(push_jobs(r, keys, 0, {{}, {}, {}}));

  CHECK(first == std::vector<std::string>{"000000001", "000000002"});
  CHECK(second == std::vector<std::string>{"000000003", "000000004", "000000005"});
  CHECK(hget(r, keys.stats(0), "seq") == "5");
  CHECK(hget(r, keys.stats(0), "pushed") == "5");
  CHECK(record_count(r, keys, 0) == 5);
}

TEST_CASE("shards keep their own sequences, records and queues", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto in_zero = fields_of(push_jobs(r, keys, 0, {{.name = "a"}}));
  auto in_one = fields_of(push_jobs(r, keys, 1, {{.name = "b"}, {.name = "b"}}));

  CHECK(in_zero == std::vector<std::string>{"000000001"});
  CHECK(in_one == std::vector<std::string>{"000000001", "000000002"});
  CHECK(read_record(r, keys, 0, "000000001")->name == "a");
  CHECK(read_record(r, keys, 1, "000000001")->name == "b");
  CHECK(hget(r, keys.stats(0), "pushed") == "1");
  CHECK(hget(r, keys.stats(1), "pushed") == "2");
  CHECK(ready_queue(r, keys, 0, "b").empty());
  CHECK(ready_queue(r, keys, 1, "a").empty());
}

TEST_CASE("pushJobs announces each name of the batch once, with its best job, in first-seen order",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  EventListener events(shared_redis().port(), keys);
  auto f = fields_of(push_jobs(r, keys, 0,
                               {{.name = "email", .priority = 5},
                                {.name = "resize", .priority = -1},
                                {.name = "email", .priority = 3},
                                {.name = "email", .priority = 3}}));
  CHECK(events.take(r) == std::vector<std::string>{"p email 0 3 " + member_of(r, keys, 0, f[2]),
                                                   "p resize 0 -1 " + member_of(r, keys, 0, f[1])});

  auto g = fields_of(push_jobs(r, keys, 1, {{.name = "resize"}}));
  CHECK(events.take(r) == std::vector<std::string>{"p resize 1 0 " + member_of(r, keys, 1, g[0])});
}

TEST_CASE("pushJobs announces a name only when its best pushed job is the queue's new head",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  EventListener events(shared_redis().port(), keys);
  push_jobs(r, keys, 0, {{.name = "email", .priority = 3}});
  events.take(r);

  // Behind a ready job of the same or a better priority: every master that knows the queue
  // already holds a head that goes first.
  push_jobs(r, keys, 0, {{.name = "email", .priority = 3}, {.name = "email", .priority = 7}});
  CHECK(events.take(r).empty());
  // Ahead of every ready job: the new head.
  auto f = fields_of(
      push_jobs(r, keys, 0, {{.name = "email", .priority = 8}, {.name = "email", .priority = 2}}));
  CHECK(events.take(r) == std::vector<std::string>{"p email 0 2 " + member_of(r, keys, 0, f[1])});
  // Once the queue is empty again, the next push is its head.
  reserve_jobs(r, keys, 0, "email", 10);
  auto g = fields_of(push_jobs(r, keys, 0, {{.name = "email", .priority = 9}}));
  CHECK(events.take(r) == std::vector<std::string>{"p email 0 9 " + member_of(r, keys, 0, g[0])});
}

TEST_CASE("records of small jobs fill buckets of 62 that Redis keeps compact", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  auto f = fields_of(push_jobs(r, keys, 0, std::vector<PushArgs>(130)));

  auto buckets = job_buckets(r, keys, 0);
  REQUIRE(buckets.size() == 3);  // fields 1..61, 62..123, 124..130
  CHECK(r.call({"HLEN", buckets[1]}).integer == 62);
  for (const std::string& bucket : buckets) {
    INFO(bucket);
    // listpack on Redis 7, ziplist before: not a hashtable either way.
    CHECK(r.call({"OBJECT", "ENCODING", bucket}).str != "hashtable");
  }
  for (const std::string& field : f) CHECK(read_record(r, keys, 0, field));
}

namespace {

// pushJobs with `take` (one byte per job); the positions and records of the jobs it took.
std::vector<jq::redis::bindings::PushJobs::Taken> taken_by(SyncRedis& r,
                                                           const jq::redis::Keys& keys, int shard,
                                                           const std::vector<PushArgs>& jobs,
                                                           const std::string& take) {
  auto reply = push_jobs(r, keys, shard, jobs, kNowMs, kStampUs, "", kMaxListBytes, take);
  return jq::redis::bindings::PushJobs::decode(reply, jobs.size())->taken;
}

// A plain job's record as pushJobs stores it from `job` in one call at kNowMs, in `state` with
// `attempts`, with `traceparent` and `result` (a running job's R_TAKEN_BY).
std::string stored_plain(const PushArgs& job, JobState state, int attempts,
                         const std::string& traceparent, const std::string& result = "") {
  jq::store::JobRecord want;
  want.name = job.name;
  want.argument = job.argument;
  want.priority = job.priority;
  want.max_retry = job.max_retry;
  want.keep_result = job.keep_result;
  want.timeout_ms = job.timeout_ms;
  want.state = state;
  want.attempts = attempts;
  want.enqueued_at_ms = kNowMs;
  want.traceparent = traceparent;
  want.result = result;
  return pack_record(want, base62(kStampUs, 9));
}

}  // namespace

TEST_CASE("a job pushJobs takes at once is stored running, its attempt counted, and not queued",
          "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  EventListener events(shared_redis().port(), keys);
  auto taken =
      taken_by(r, keys, 3, {{.name = "email", .timeout_ms = 5000}, {.name = "email"}}, "10");

  REQUIRE(taken.size() == 1);
  CHECK(taken[0].position == 0);
  auto record = jq::store::decode_record(taken[0].record);
  REQUIRE(record);
  CHECK(record->state == JobState::running);
  CHECK(record->attempts == 1);
  CHECK(record->name == "email");
  auto stored = read_record(r, keys, 3, "000000001");
  REQUIRE(stored);
  CHECK(stored->state == JobState::running);
  CHECK(stored->attempts == 1);
  CHECK(zscore(r, keys.inflight(3), "000000001") == kNowMs + 5000);
  // The other job is queued as always, and it alone is announced.
  auto ready = ready_queue(r, keys, 3, "email");
  REQUIRE(ready.size() == 1);
  CHECK(ready[0].first.substr(9) == "000000002");
  CHECK(events.take(r) == std::vector<std::string>{"p email 3 0 " + ready[0].first});
  CHECK(hget(r, keys.counts(3), "running:email") == "1");
  CHECK(hget(r, keys.counts(3), "ready:email") == "1");
  CHECK(hget(r, keys.stats(3), "dispatched") == "1");
  CHECK(hget(r, keys.stats(3), "pushed") == "2");
}

TEST_CASE("a job taken at once keeps every value it was pushed with, its traceparent too",
          "[redis]") {
  // Its running record is the queued one the master packed, with the script's running slots in
  // place of the queued ones: a wrong cut would shift or lose values.
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const std::string trace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  const PushArgs job{.name = "resize",
                     .argument = "\x81\xa1w\xcd\x04\x00",
                     .priority = -2,
                     .max_retry = 7,
                     .keep_result = true,
                     .timeout_ms = 9000};
  // The call's token (binary, as the master makes them) stays with the job while it runs, in
  // its result slot, for a master that lost this answer to find it (findReserved).
  const std::string token("\x7f\x00\xfe\x01\x02", 5);
  auto reply = push_jobs(r, keys, 1, {job}, kNowMs, kStampUs, trace, kMaxListBytes, "1", token);
  auto taken = jq::redis::bindings::PushJobs::decode(reply, 1)->taken;
  REQUIRE(taken.size() == 1);

  CHECK(taken[0].record == stored_plain(job, JobState::running, 1, trace, token));
  CHECK(raw_record(r, keys, 1, fields_of(reply)[0]) == taken[0].record);
}

TEST_CASE("a job asked to be taken but queued is stored as if it had not been asked", "[redis]") {
  // The master packs a job it asks to take running; the script cuts it back to queued when a
  // ready job of its name goes first: a wrong cut would shift or lose values.
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  push_jobs(r, keys, 2, {{.name = "resize", .priority = -2}});
  const std::string trace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  const PushArgs job{.name = "resize",
                     .argument = std::string(300, 'a'),
                     .priority = -2,
                     .max_retry = 7,
                     .keep_result = true,
                     .timeout_ms = 9000};
  auto reply = push_jobs(r, keys, 2, {job}, kNowMs, kStampUs, trace, kMaxListBytes, "1", "tok1");
  CHECK(jq::redis::bindings::PushJobs::decode(reply, 1)->taken.empty());

  CHECK(raw_record(r, keys, 2, fields_of(reply)[0]) ==
        stored_plain(job, JobState::queued, 0, trace));
  CHECK(ready_queue(r, keys, 2, "resize").size() == 2);
  CHECK(hget(r, keys.counts(2), "ready:resize") == "2");
  CHECK_FALSE(hget(r, keys.counts(2), "running:resize"));
}

TEST_CASE("pushJobs takes no job that a ready job of its name should run before", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  push_jobs(r, keys, 0, {{.name = "email", .priority = 3}});

  // Queued already at the same or a better priority.
  CHECK(taken_by(r, keys, 0, {{.name = "email", .priority = 3}}, "1").empty());
  CHECK(taken_by(r, keys, 0, {{.name = "email", .priority = 4}}, "1").empty());
  // A better priority goes first; another name's queue does not count.
  CHECK(taken_by(r, keys, 0, {{.name = "email", .priority = 2}}, "1").size() == 1);
  CHECK(taken_by(r, keys, 0, {{.name = "resize", .priority = 9}}, "1").size() == 1);
  // Earlier in the same batch, queued at the same or a better priority.
  CHECK(taken_by(r, keys, 1, {{.name = "a", .priority = 1}, {.name = "a", .priority = 1}}, "01")
            .empty());
  auto better =
      taken_by(r, keys, 2, {{.name = "a", .priority = 5}, {.name = "a", .priority = 1}}, "01");
  REQUIRE(better.size() == 1);
  CHECK(better[0].position == 1);
}

TEST_CASE("pushJobs takes only plain jobs without constraints", "[redis]") {
  SyncRedis r(shared_redis().port());
  auto keys = fresh_keys();
  const std::string constraints = "\x92\xa6tenant\xa1x";  // ["tenant", "x"]
  auto taken = taken_by(r, keys, 0,
                        {{.name = "a", .ready_at_ms = kNowMs + 1000},
                         {.name = "b", .unique_key = "k"},
                         {.name = "c", .ordering_key = "o"},
                         {.name = "d", .constraints = constraints},
                         {.name = "e"}},
                        "11111");
  REQUIRE(taken.size() == 1);
  CHECK(taken[0].position == 4);
  CHECK(read_record(r, keys, 0, "000000001")->state == JobState::scheduled);
  CHECK(read_record(r, keys, 0, "000000004")->state == JobState::queued);
  CHECK(ready_queue(r, keys, 0, "d").size() == 1);
}

TEST_CASE("the record head the master packs is what Redis's cmsgpack packs for those values",
          "[redis]") {
  // pushJobs joins it to the slots it packs itself: a different form of a value would still be
  // read, but a record could outgrow hash-max-listpack-value and take more memory.
  SyncRedis r(shared_redis().port());
  struct Values {
    std::string name, argument;
    std::int32_t priority;
    std::int64_t max_retry;
    bool keep_result;
    std::int64_t timeout_ms;
  };
  const std::string long_argument(40, 'x');  // str8
  for (const Values& v : {Values{"a", "\x81\xa1k\x01", 0, 3, false, 30000},
                          Values{"mail.send", long_argument, -2147483647 - 1, 0, true, 1},
                          Values{"n", "\xc0", 2147483647, 1000000, false, 86400000},
                          Values{"neg", "\x01", -33, 200, true, 4294967296}}) {
    const jq::redis::Reply lua =
        r.call({"EVAL",
                "return cmsgpack.pack(ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), "
                "tonumber(ARGV[5]), tonumber(ARGV[6]))",
                "0", v.name, v.argument, std::to_string(v.priority), std::to_string(v.max_retry),
                v.keep_result ? "1" : "0", std::to_string(v.timeout_ms)});
    INFO(v.name);
    CHECK(jq::redis::record_head({v.name, v.argument, v.priority, v.max_retry, v.keep_result,
                                  v.timeout_ms}) == lua.str);
  }
}
