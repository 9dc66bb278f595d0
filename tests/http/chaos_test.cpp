// Chaos with accounting (issue 16): jobs are pushed without pause over several connections
// while the master, the worker and Redis are each killed with SIGKILL and started again in their
// place, and while Redis hangs (SIGSTOP, then SIGCONT): once for longer than a job's timeout, once
// also for longer than the master's Redis command timeout. Afterwards every push the master
// acknowledged must have ended succeeded or dead, none lost, and the journals of the worker's
// processes must show no job with two attempts running at once. Running a job again after a
// fault is allowed (delivery is at least once): the test prints how often that happened.
//
// Bounded: four pushers at about 35 pushes/s each, one worker, the faults one after the other,
// each made with attempts in flight and followed by waiting for jobs to succeed again; about
// 25 s in all, 12 of them the long hang.
#include <catch2/catch.hpp>

#include <atomic>
#include <csignal>
#include <iostream>
#include <mutex>
#include <thread>

#include "tests/support/daemon.hpp"
#include "tests/support/redis_server.hpp"
#include "tests/support/worker.hpp"
#include "tests/support/worker_journal.hpp"

namespace jq::test {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int kPushers = 4;
constexpr auto kPushPace = 25ms;  // between one pusher's pushes, so the run stays bounded
constexpr auto kJobTimeout = 2s;
// Of every 10 jobs, one asks the worker to fail (it ends dead) and one runs 800 ms, so attempts
// are in flight whenever a fault strikes; the others run up to 50 ms.
constexpr int kMix = 10;
constexpr int kInFlight = 4;   // attempts running when a fault is made, at least
constexpr int kProgress = 40;  // jobs succeeded after a fault: the system works again
constexpr auto kPoll = 50ms;   // between two looks at the master's stats
// How soon after a fault is over jobs must succeed again: three times the longest wait built
// in (a killed master's worker slots are free again after 5 s, when its heartbeat lapses).
constexpr auto kRecovery = 15s;
// The master's Redis command timeout (ConnectionOptions::command_timeout): a hang longer than
// this makes it drop the connection and answer 503 until Redis is back.
constexpr auto kCommandTimeout = 10s;
// Fast retries, so jobs failed by a fault run again within the test.
const std::string kMasterYaml = "retry:\n  base: 0.05\n  max: 0.5\n  jitter: 0\n";

json chaos_job(int n) {
  const bool fail = n % kMix == kMix - 1;
  const int sleep_ms = n % kMix == 0 ? 800 : n % 50;
  return {{"name", "chaos"},
          {"argument", fail ? json{{"fail", true}} : json{{"sleep_ms", sleep_ms}}},
          {"timeout", std::chrono::duration<double>(kJobTimeout).count()},
          {"max_retry", fail ? 1 : 20},
          {"keep_result", true}};
}

// Single-job pushes from kPushers threads, one connection per push, until stop().
class Pushers {
 public:
  explicit Pushers(std::uint16_t port) {
    for (int p = 0; p < kPushers; ++p) threads_.emplace_back([this, port] { run(port); });
  }
  ~Pushers() { stop(); }

  void stop() {
    stopping_ = true;
    for (auto& t : threads_) {
      if (t.joinable()) t.join();
    }
  }

  std::size_t acknowledged() const {
    std::lock_guard lock(mutex_);
    return to_succeed_.size() + to_fail_.size();
  }
  // After stop(): the ids answered 201, by whether the job was meant to succeed.
  const std::vector<std::string>& to_succeed() const { return to_succeed_; }
  const std::vector<std::string>& to_fail() const { return to_fail_; }
  // Pushes answered with anything else, or not at all (the master or Redis was down): the job
  // may or may not exist.
  std::size_t unacknowledged() const { return unacknowledged_; }

 private:
  void run(std::uint16_t port) {
    const HttpClient http(port);
    for (int n = 0; !stopping_; ++n) {
      const json job = chaos_job(n);
      std::optional<std::string> id;
      try {
        const HttpResult res = http.post("/v1/jobs", job);
        if (res.status == 201) id = res.value()["id"];
      } catch (const std::exception&) {  // refused or cut off: not acknowledged
      }
      record(id, job["argument"].contains("fail"));
      std::this_thread::sleep_for(kPushPace);
    }
  }

  void record(const std::optional<std::string>& id, bool fail) {
    std::lock_guard lock(mutex_);
    if (!id) {
      ++unacknowledged_;
    } else {
      (fail ? to_fail_ : to_succeed_).push_back(*id);
    }
  }

  std::atomic<bool> stopping_{false};
  mutable std::mutex mutex_;
  std::vector<std::string> to_succeed_;
  std::vector<std::string> to_fail_;
  std::size_t unacknowledged_ = 0;
  std::vector<std::thread> threads_;
};

// GET /v1/stats, or null while the master cannot answer it.
json stats(const HttpClient& http) {
  try {
    const HttpResult res = http.get("/v1/stats");
    if (res.status == 200) return res.value();
  } catch (const std::exception&) {
  }
  return nullptr;
}

std::string tail(const std::string& log, std::size_t bytes = 4000) {
  return log.size() > bytes ? log.substr(log.size() - bytes) : log;
}

// Waits until at least kInFlight attempts run; returns how many.
long long require_running(const HttpClient& http) {
  json now;
  REQUIRE(wait_until(
      [&] {
        now = stats(http);
        return !now.is_null() && now["running"] >= kInFlight;
      },
      30s, kPoll));
  return now["running"];
}

// Waits until kProgress more jobs have succeeded than when it was called, at most kRecovery;
// fails the test with the master's log when they do not.
void require_progress(const std::string& after, const Daemon& master) {
  const HttpClient http = master.http();
  const auto deadline = Clock::now() + kRecovery;
  auto left = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  };
  json first, now;
  const bool done =
      wait_until([&] { return !(first = stats(http)).is_null(); }, left(), kPoll) &&
      wait_until(
          [&] {
            now = stats(http);
            return !now.is_null() &&
                   now["succeeded"] >= first["succeeded"].get<long long>() + kProgress;
          },
          left(), kPoll);
  if (!done)
    FAIL("no progress after " << after << "; stats " << now.dump() << "; master log:\n"
                              << tail(master.log()));
}

bool drained(const json& s) {
  return !s.is_null() && s["ready"] == 0 && s["scheduled"] == 0 && s["running"] == 0;
}

// The state of each job (GET /v1/jobs/{id}), "missing" for a 404.
std::map<std::string, std::string> states_of(const HttpClient& http,
                                             const std::vector<std::string>& ids) {
  std::map<std::string, std::string> states;
  for (const std::string& id : ids) {
    const HttpResult res = http.get("/v1/jobs/" + id);
    states[id] = res.status == 200 ? res.value()["state"].get<std::string>()
                                   : "missing (HTTP " + std::to_string(res.status) + ")";
  }
  return states;
}

// How the acknowledged jobs ended, against what each was meant to do and the worker's journals.
struct Tally {
  std::size_t succeeded = 0;
  std::size_t dead = 0;
  std::size_t reran = 0;                // meant to succeed, and started more than once
  std::vector<std::string> lost;        // neither succeeded nor dead
  std::vector<std::string> unexpected;  // dead though meant to succeed (20 retries), or the reverse
  std::vector<std::string> unseen;      // succeeded without a success in the worker's journals
};

Tally tally(const std::map<std::string, std::string>& to_succeed,
            const std::map<std::string, std::string>& to_fail, const WorkerJournal& journal) {
  Tally t;
  for (const auto* group : {&to_succeed, &to_fail}) {
    const std::string meant = group == &to_succeed ? "succeeded" : "dead";
    for (const auto& [id, state] : *group) {
      if (state != "succeeded" && state != "dead") t.lost.push_back(id + ": " + state);
      if (state == "succeeded") ++t.succeeded;
      if (state == "dead") ++t.dead;
      if (state != meant) t.unexpected.push_back(id + ": " + state);
      if (state == "succeeded" && journal.successes_by_job.count(id) == 0) t.unseen.push_back(id);
      const auto started = journal.starts_by_job.find(id);
      if (meant == "succeeded" && started != journal.starts_by_job.end() && started->second > 1) {
        ++t.reran;
      }
    }
  }
  return t;
}

// The first few of `items`: enough to look into when a check fails, short enough to print.
template <class Items>
std::vector<std::string> first_few(const Items& items) {
  std::vector<std::string> out(items.begin(), items.end());
  if (out.size() > 10) out.resize(10);
  return out;
}

// "<fault>: N running, jobs succeed again after S s" (S from the fault's start), for the summary.
std::string fault_line(const std::string& fault, long long running, Clock::time_point at) {
  return fault + ": " + std::to_string(running) + " running, jobs succeed again after " +
         std::to_string(std::chrono::duration<double>(Clock::now() - at).count()) + " s";
}

}  // namespace

TEST_CASE("chaos: kill -9 of master and worker and Redis and a hung Redis lose no pushed job",
          "[http]") {
  const auto began = Clock::now();
  TempDir dir;
  // appendfsync always: Redis writes the append-only file, and fsyncs it, before it answers.
  // With the default everysec the write may wait while a background fsync runs, and a kill -9
  // then loses writes that were already answered: pushes the master acknowledged.
  RedisServer redis({"--appendfsync", "always"});
  DaemonOptions options{redis.url(), 4, kMasterYaml};
  options.port = free_port();
  std::vector<std::unique_ptr<Daemon>> masters;  // the killed ones too: their logs tell more
  masters.push_back(std::make_unique<Daemon>(options));
  const HttpClient http(options.port);
  const std::string master_url = "http://127.0.0.1:" + std::to_string(options.port);
  std::vector<std::string> journals;  // one per worker process
  auto start_worker = [&](std::uint16_t port) {
    journals.push_back(dir.file("journal-" + std::to_string(journals.size())));
    const std::vector<std::string> args = {"--journal", journals.back(), "--register",
                                           master_url,  "--concurrency", "32"};
    return std::make_unique<Worker>(args, port);
  };
  std::unique_ptr<Worker> worker = start_worker(0);
  const std::uint16_t worker_port = worker->port();
  std::vector<std::string> faults;

  Pushers pushers(options.port);
  require_progress("the start", *masters.back());

  // The master: its attempts in flight run again once their deadline (and the reaper's grace)
  // has passed; the new master waits for the dead one's worker slots to lapse.
  long long running = require_running(http);
  auto at = Clock::now();
  REQUIRE(masters.back()->stop(SIGKILL, 10s) == 128 + SIGKILL);
  masters.push_back(std::make_unique<Daemon>(options));  // the same port; waits for /readyz
  require_progress("the master's kill", *masters.back());
  faults.push_back(fault_line("master killed", running, at));

  // The worker: its running attempts break; pushes go on and wait for its return.
  running = require_running(http);
  at = Clock::now();
  REQUIRE(worker->stop(SIGKILL, 10s) == 128 + SIGKILL);
  const std::size_t before = pushers.acknowledged();
  REQUIRE(wait_until([&] { return pushers.acknowledged() >= before + kProgress; }, 30s, kPoll));
  worker = start_worker(worker_port);
  require_progress("the worker's kill", *masters.back());
  faults.push_back(fault_line("worker killed", running, at));

  // Redis, started again on its port with its append-only file.
  running = require_running(http);
  at = Clock::now();
  redis.kill();
  REQUIRE(wait_until([&] { return !masters.back()->ready(); }, 10s, kPoll));
  redis.start();
  REQUIRE(wait_until([&] { return masters.back()->ready(); }, 30s, kPoll));
  require_progress("Redis's kill", *masters.back());
  faults.push_back(fault_line("Redis killed", running, at));

  // Redis hung, its connections open and nothing answered: for twice a job's timeout (the
  // master's commands wait; deadlines pass), then for longer than the master's command timeout
  // (it drops the connection; what it had sent runs when Redis goes on, its answers unread).
  // The fault is the duration itself, so here the test sleeps.
  for (const auto hang : {2 * kJobTimeout, kCommandTimeout + 2s}) {
    running = require_running(http);
    at = Clock::now();
    redis.freeze();
    std::this_thread::sleep_for(hang);
    redis.thaw();
    const std::string fault = "Redis hung for " + std::to_string(hang.count()) + " s";
    require_progress(fault, *masters.back());
    faults.push_back(fault_line(fault, running, at));
  }

  pushers.stop();
  json last;
  const bool empty = wait_until([&] { return drained(last = stats(http)); }, 60s, kPoll);
  if (!empty)
    FAIL("jobs left: " << last.dump() << "; master log:\n" << tail(masters.back()->log()));

  const auto to_succeed = states_of(http, pushers.to_succeed());
  const auto to_fail = states_of(http, pushers.to_fail());
  WorkerJournal journal;
  for (const std::string& path : journals) journal.add(read_file(path));

  const Tally t = tally(to_succeed, to_fail, journal);
  const std::size_t acknowledged = pushers.acknowledged();
  for (const std::string& line : faults) std::cout << "chaos: " << line << "\n";
  std::cout << "chaos: " << acknowledged << " pushes acknowledged = " << t.succeeded
            << " succeeded + " << t.dead << " dead + " << t.lost.size() << " lost; "
            << pushers.unacknowledged() << " unacknowledged; " << journal.starts << " attempts, "
            << t.reran << " jobs meant to succeed ran more than once, "
            << journal.duplicate_successes() << " duplicate successes, "
            << journal.overlapping.size() << " jobs ran twice at once; "
            << std::chrono::duration<double>(Clock::now() - began).count() << " s" << std::endl;

  // Counted by id: two pushes answered with one id would count once here.
  CHECK(t.succeeded + t.dead + t.lost.size() == acknowledged);
  const std::vector<std::string> none;
  CHECK(first_few(t.lost) == none);
  CHECK(first_few(t.unexpected) == none);
  CHECK(first_few(t.unseen) == none);
  CHECK(first_few(journal.overlapping) == none);
  // The store's counters agree: every job it took, acknowledged or not, ended once.
  const long long pushed = last["pushed"];
  CHECK(pushed >= static_cast<long long>(acknowledged));
  CHECK(pushed <= static_cast<long long>(acknowledged + pushers.unacknowledged()));
  CHECK(last["succeeded"].get<long long>() + last["dead"].get<long long>() == pushed);
}

}  // namespace jq::test
