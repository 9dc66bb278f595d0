// jqctl, the real binary, against the real daemon and Redis and, where jobs must run, the real
// jqworker: what each subcommand sends and prints, and its exit codes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <set>

#include "tests/support/daemon.hpp"
#include "tests/support/redis_server.hpp"
#include "tests/support/worker.hpp"

using jq::test::ctl_binary;
using jq::test::Daemon;
using jq::test::DaemonOptions;
using jq::test::free_port;
using jq::test::ProgramResult;
using jq::test::RedisServer;
using jq::test::run_program;
using jq::test::TempDir;
using jq::test::wait_until;
using jq::test::Worker;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

constexpr int kExitNotFound = 3;
constexpr int kExitBadInput = 4;
constexpr int kExitUnavailable = 5;
constexpr int kExitConflict = 6;
constexpr int kExitAuth = 7;

std::string url_of(std::uint16_t port) {
  return "http://127.0.0.1:" + std::to_string(port);
}

// jqctl with `args` (global flags first, then the subcommand).
ProgramResult jqctl(std::vector<std::string> args, const std::vector<std::string>& env = {},
                    const std::string& stdin_text = "") {
  args.insert(args.begin(), ctl_binary());
  return run_program(args, env, stdin_text);
}

json parsed(const ProgramResult& r) {
  INFO("stdout: " << r.out << "stderr: " << r.err);
  return json::parse(r.out);
}

// An error is one line on stderr, "jqctl: ...", and nothing on stdout.
void check_error_line(const ProgramResult& r, const std::string& contains) {
  INFO("stdout: " << r.out << "stderr: " << r.err);
  CHECK(r.out.empty());
  CHECK(r.err.rfind("jqctl: ", 0) == 0);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.find(contains) != std::string::npos);
}

struct Fixture {
  explicit Fixture(const std::string& extra_yaml = "")
      : daemon(DaemonOptions{redis.url(), 4, extra_yaml}) {}

  RedisServer redis;
  Daemon daemon;
  std::string url = url_of(daemon.port());

  // jqctl --url URL `args`.
  ProgramResult ctl(std::vector<std::string> args, const std::string& stdin_text = "") const {
    args.insert(args.begin(), {"--url", url});
    return jqctl(std::move(args), {}, stdin_text);
  }

  // ctl(args), which must succeed; its stdout as JSON.
  json ok(const std::vector<std::string>& args, const std::string& stdin_text = "") const {
    const ProgramResult r = ctl(args, stdin_text);
    INFO("jqctl " << args.front() << " stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.empty());
    return parsed(r);
  }

  std::string push(const std::vector<std::string>& flags) const {
    std::vector<std::string> args = {"push"};
    args.insert(args.end(), flags.begin(), flags.end());
    return ok(args)["id"];
  }

  std::string register_worker(const Worker& worker, const std::string& names) const {
    return ok({"workers", "register", "--url", worker.url(), "--names", names})["id"];
  }

  std::string state(const std::string& id) const { return ok({"job", id})["state"]; }
};

}  // namespace

TEST_CASE("jqctl push sends every flag and job shows the job, compact when not a terminal",
          "[http]") {
  Fixture f;
  const ProgramResult pushed =
      f.ctl({"push", "--name", "email.send", "--argument", R"({"to": "a@example.com"})",
             "--priority", "5", "--max-retry", "2", "--keep-result", "--timeout", "12.5"});
  REQUIRE(pushed.exit_code == 0);
  CHECK(pushed.err.empty());
  CHECK(std::count(pushed.out.begin(), pushed.out.end(), '\n') == 1);
  const std::string id = parsed(pushed)["id"];

  const ProgramResult shown = f.ctl({"job", id});
  REQUIRE(shown.exit_code == 0);
  CHECK(shown.out.back() == '\n');
  CHECK(std::count(shown.out.begin(), shown.out.end(), '\n') == 1);  // compact: one line
  const json job = parsed(shown);
  CHECK(job["id"] == id);
  CHECK(job["name"] == "email.send");
  CHECK(job["priority"] == 5);
  CHECK(job["max_retry"] == 2);
  CHECK(job["keep_result"] == true);
  CHECK(job["timeout"] == 12.5);
  CHECK(job["state"] == "queued");
}

TEST_CASE("jqctl pretty-prints with a 2-space indent on a terminal", "[http]") {
  Fixture f;
  // script(1) runs jqctl with a pseudo-terminal as its stdout.
  const std::string command = "'" + ctl_binary() + "' --url " + f.url + " stats";
  const ProgramResult r = run_program({"script", "-qec", command, "/dev/null"});
  REQUIRE(r.exit_code == 0);
  INFO(r.out);
  CHECK(r.out.find("{\r\n  \"") == 0);
  CHECK(r.out.find("\r\n  \"pushed\": 0") != std::string::npos);
}

TEST_CASE("jqctl push --file sends a batch from a file, and one job from stdin", "[http]") {
  Fixture f;
  TempDir dir;
  const std::string file = dir.file("jobs.json");
  std::ofstream(file) << R"([{"name": "resize", "priority": -1}, {"name": "resize"}])";
  const json batch = f.ok({"push", "--file", file});
  REQUIRE(batch["ids"].size() == 2);
  CHECK(f.ok({"job", batch["ids"][0].get<std::string>()})["priority"] == -1);

  const json one = f.ok({"push", "--file", "-"}, R"({"name": "thumb", "argument": [1, 2]})");
  CHECK(f.state(one["id"].get<std::string>()) == "queued");
  CHECK(f.ok({"stats"})["pushed"] == 3);
}

TEST_CASE("jqctl push sends each flow-control flag as its job field", "[http]") {
  // A bad value of each flag comes back as the master's 400 naming the field it was sent as.
  Fixture f;
  struct Case {
    std::vector<std::string> flags;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--delay", "-1"}, "delay must be a number of seconds from 0 to 31536000, got -1"},
      {{"--run-at", "2026-12-01T09:00:00"}, "run_at must be an ISO 8601 time with an offset"},
      {{"--unique-key", ""}, "unique_key must be a string of 1 to 256 bytes"},
      {{"--unique-key", "k", "--unique-until", "soon"}, "unique_until must be \"started\""},
      {{"--unique-key", "k", "--unique-for", "0"}, "unique_for must be a number of seconds"},
      {{"--ordering-key", ""}, "ordering_key must be a string of 1 to 256 bytes"},
      {{"--delay", "5", "--run-at", "2026-12-01T09:00:00Z"},
       "run_at and delay cannot be given together"},
      {{"--unique-until", "started"}, "unique_until applies only to a unique job"},
      {{"--unique-for", "60"}, "unique_for applies only to a unique job"},
      {{"--unique-key", "k", "--on-duplicate", "merge"}, "on_duplicate must be \"keep\""},
      {{"--on-duplicate", "replace"}, "on_duplicate applies only to a unique job"},
      {{"--unique-key", "k", "--unique-until", "finished", "--on-duplicate", "append"},
       "unique_until \"finished\" cannot go with on_duplicate"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"push", "--name", "a"};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    const ProgramResult r = f.ctl(args);
    INFO(c.flags.front() << " " << c.flags.back());
    CHECK(r.exit_code == kExitBadInput);
    check_error_line(r, c.message);
  }
  CHECK(f.ok({"stats"})["pushed"] == 0);

  // Good values are accepted.
  CHECK_FALSE(f.push({"--name", "a", "--delay", "0.5"}).empty());
  CHECK_FALSE(f.push({"--name", "a", "--run-at", "2026-12-01T11:00:00.250+02:00"}).empty());
  CHECK_FALSE(f.push({"--name", "a", "--unique-key", "k1", "--unique-until", "started",
                      "--unique-for", "60", "--ordering-key", "o"})
                  .empty());
}

TEST_CASE("jqctl push of a delayed, unique and ordered job, then its duplicate", "[http]") {
  // Needs the store side of the job options (unique claims, scheduled pushes, the job view).
  Fixture f;
  const std::string id = f.push({"--name", "report", "--run-at", "2099-12-01T09:00:00+01:00",
                                 "--unique-key", "report:2099", "--unique-until", "started",
                                 "--unique-for", "600", "--ordering-key", "reports"});
  const json job = f.ok({"job", id});
  CHECK(job["state"] == "scheduled");
  CHECK(job.value("ready_at", "").rfind("2099-12-01T08:00:00", 0) == 0);
  CHECK(job.value("unique_key", "") == "report:2099");
  CHECK(job.value("ordering_key", "") == "reports");

  // A unique key is unique among the jobs of one ordering key (they share a shard).
  const ProgramResult again = f.ctl(
      {"push", "--name", "report", "--unique-key", "report:2099", "--ordering-key", "reports"});
  CHECK(again.exit_code == 0);
  CHECK(again.err.empty());
  CHECK(parsed(again) == json({{"id", id}, {"duplicate", true}}));
  CHECK(f.ok({"stats"})["pushed"] == 1);

  const std::string later = f.push({"--name", "report", "--delay", "3600"});
  const json delayed = f.ok({"job", later});
  CHECK(delayed["state"] == "scheduled");
  CHECK(delayed.value("ready_at", "") > delayed.value("enqueued_at", ""));

  // A merging push prints merged: true, and the job takes its priority.
  const std::string merging = f.push({"--name", "report", "--unique-key", "digest", "--delay",
                                      "3600", "--on-duplicate", "replace"});
  const ProgramResult merged = f.ctl({"push", "--name", "report", "--unique-key", "digest",
                                      "--priority", "-2", "--on-duplicate", "replace"});
  CHECK(merged.exit_code == 0);
  CHECK(parsed(merged) == json({{"id", merging}, {"duplicate", true}, {"merged", true}}));
  CHECK(f.ok({"job", merging})["priority"] == -2);
}

TEST_CASE("jqctl push --file excludes every job flag", "[http]") {
  Fixture f;
  for (const std::vector<std::string>& flag :
       std::vector<std::vector<std::string>>{{"--name", "a"},
                                             {"--delay", "1"},
                                             {"--run-at", "2026-12-01T09:00:00Z"},
                                             {"--unique-key", "k"},
                                             {"--unique-until", "started"},
                                             {"--unique-for", "60"},
                                             {"--ordering-key", "o"},
                                             {"--on-duplicate", "append"}}) {
    std::vector<std::string> args = {"push", "--file", "-"};
    args.insert(args.end(), flag.begin(), flag.end());
    const ProgramResult r = f.ctl(args, R"({"name": "a"})");
    INFO(flag.front());
    CHECK(r.exit_code == kExitBadInput);
    check_error_line(r, flag.front());
  }
  CHECK(f.ok({"stats"})["pushed"] == 0);
}

TEST_CASE("jqctl result --wait returns the answer of a worker registered with jqctl", "[http]") {
  Fixture f;
  Worker worker;
  const json reg = f.ok({"workers", "register", "--url", worker.url(), "--names", "echo,other",
                         "--concurrency", "2", "--ttl", "60", "--header", "X-Token=abc"});
  const std::string worker_id = reg["id"];
  const json listed = f.ok({"workers", "list"});
  REQUIRE(listed.size() == 1);
  CHECK(listed[0]["url"] == worker.url());
  CHECK(listed[0]["names"] == json::array({"echo", "other"}));
  CHECK(listed[0]["concurrency"] == 2);
  CHECK(f.ok({"workers", "get", worker_id})["id"] == worker_id);

  const std::string id = f.push({"--name", "echo", "--argument", R"({"n": 7})", "--keep-result"});
  const json result = f.ok({"result", id, "--wait", "10"});
  CHECK(result["type"] == "success");
  CHECK(result["result"] == json{{"n", 7}});
  const ProgramResult again = f.ctl({"result", id});
  CHECK(again.exit_code == 0);
  CHECK(again.out == "null\n");

  const ProgramResult deleted = f.ctl({"workers", "delete", worker_id});
  CHECK(deleted.exit_code == 0);
  CHECK(deleted.out.empty());
  CHECK(f.ctl({"workers", "delete", worker_id}).exit_code == kExitNotFound);
}

TEST_CASE("jqctl workers register --secret or $JQ_WORKER_SECRET makes the worker signed",
          "[http]") {
  Fixture f;
  const std::string secret = "jqctl-worker-secret-0123";
  const json reg = f.ok(
      {"workers", "register", "--url", "http://127.0.0.1:9/a", "--names", "a", "--secret", secret});
  const std::string id = reg["id"];
  const json shown = f.ok({"workers", "get", id});
  CHECK(shown["signed"] == true);
  CHECK_THAT(shown.dump(), !Catch::Contains(secret));

  const ProgramResult from_env = jqctl(
      {"--url", f.url, "workers", "register", "--url", "http://127.0.0.1:9/b", "--names", "b"},
      {"JQ_WORKER_SECRET=" + secret});
  REQUIRE(from_env.exit_code == 0);
  const std::string env_id = parsed(from_env)["id"];
  CHECK(f.ok({"workers", "get", env_id})["signed"] == true);

  // Registered again without it: unsigned. A short one is the master's 400, naming the field.
  f.ok({"workers", "register", "--url", "http://127.0.0.1:9/a", "--names", "a"});
  CHECK(f.ok({"workers", "get", id})["signed"] == false);
  const ProgramResult bad = f.ctl({"workers", "register", "--url", "http://127.0.0.1:9/c",
                                   "--names", "c", "--secret", "tiny-9z"});
  CHECK(bad.exit_code != 0);
  CHECK_THAT(bad.err, Catch::Contains("secret must be 16 to 256 bytes, got 7 bytes"));
  CHECK_THAT(bad.err, !Catch::Contains("tiny-9z"));
}

TEST_CASE("jqctl result of a pending job prints its state and exits 0", "[http]") {
  Fixture f;
  const std::string id = f.push({"--name", "nobody.serves", "--keep-result"});
  const json pending = f.ok({"result", id});
  CHECK(pending["id"] == id);
  CHECK(pending["state"] == "queued");
  CHECK(pending["attempts"] == 0);
}

TEST_CASE("jqctl cancel exits 0 and prints nothing, then 3 for the cancelled job", "[http]") {
  Fixture f;
  const std::string id = f.push({"--name", "later"});
  const ProgramResult first = f.ctl({"cancel", id});
  CHECK(first.exit_code == 0);
  CHECK(first.out.empty());
  CHECK(first.err.empty());
  const ProgramResult second = f.ctl({"cancel", id});
  CHECK(second.exit_code == kExitNotFound);
  check_error_line(second, id);
}

TEST_CASE("jqctl cancel of a running job exits 6 with the master's message", "[http]") {
  Fixture f;
  Worker worker;
  f.register_worker(worker, "slow");
  const std::string id = f.push({"--name", "slow", "--argument", R"({"sleep_ms": 2000})"});
  REQUIRE(wait_until([&] { return f.state(id) == "running"; }, 10s));
  const ProgramResult r = f.ctl({"cancel", id});
  CHECK(r.exit_code == kExitConflict);
  check_error_line(r, "running");
}

TEST_CASE("jqctl pauses, lists and resumes queues", "[http]") {
  Fixture f;
  f.push({"--name", "reports"});
  CHECK(f.ok({"queues", "pause", "reports"})["paused"] == true);
  const json queues = f.ok({"queues", "list"});
  REQUIRE(queues.size() == 1);
  CHECK(queues[0]["name"] == "reports");
  CHECK(queues[0]["ready"] == 1);
  CHECK(queues[0]["paused"] == true);
  CHECK(f.ok({"queues", "resume", "reports"})["paused"] == false);
  CHECK(f.ok({"queues", "get", "reports"})["paused"] == false);
  CHECK(f.ctl({"queues", "get", "never.seen"}).exit_code == kExitNotFound);
}

TEST_CASE("jqctl browses jobs page by page", "[http]") {
  Fixture f;
  const std::string high = f.push({"--name", "browse", "--priority", "9"});
  const std::string low = f.push({"--name", "browse", "--priority", "1"});
  const std::string other = f.push({"--name", "elsewhere"});
  const json first = f.ok({"jobs", "--name", "browse", "--limit", "1"});
  REQUIRE(first["jobs"].size() == 1);
  CHECK(first["jobs"][0]["id"] == low);
  const json second =
      f.ok({"jobs", "--name", "browse", "--limit", "1", "--cursor", first["next_cursor"]});
  CHECK(second["jobs"][0]["id"] == high);
  CHECK(second["next_cursor"].is_null());
  std::set<std::string> queued;
  const json all = f.ok({"jobs", "--state", "queued"});  // kept: its ["jobs"] is iterated
  for (const json& j : all["jobs"]) queued.insert(j["id"]);
  CHECK(queued == std::set<std::string>{high, low, other});
  CHECK(f.ok({"jobs", "--state", "dead"})["jobs"].empty());
  const ProgramResult bad = f.ctl({"jobs", "--state", "finished"});
  CHECK(bad.exit_code != 0);
  CHECK(bad.err.find("state") != std::string::npos);
}

TEST_CASE("jqctl lists, retries and deletes dead jobs", "[http]") {
  Fixture f;
  Worker worker;
  f.register_worker(worker, "broken");
  const std::string id =
      f.push({"--name", "broken", "--argument", R"({"status": 500})", "--max-retry", "0"});
  const auto dead_ids = [&] {
    std::vector<std::string> ids;
    for (const json& d : f.ok({"dead", "list", "--name", "broken", "--limit", "10"})) {
      ids.push_back(d["id"]);
    }
    return ids;
  };
  REQUIRE(wait_until([&] { return dead_ids() == std::vector<std::string>{id}; }, 10s));
  CHECK(f.ok({"dead", "list", "--name", "other"}).empty());

  CHECK(f.ok({"dead", "retry", id})["id"] == id);
  // It fails again at once (the worker still answers 500) and is dead again.
  REQUIRE(wait_until([&] { return f.state(id) == "dead"; }, 10s));
  CHECK(f.ok({"stats"})["dead"] >= 1);

  const ProgramResult deleted = f.ctl({"dead", "delete", id});
  CHECK(deleted.exit_code == 0);
  CHECK(deleted.out.empty());
  CHECK(dead_ids().empty());
  CHECK(f.ctl({"dead", "delete", id}).exit_code == kExitNotFound);
}

TEST_CASE("jqctl stats prints every counter", "[http]") {
  Fixture f;
  f.push({"--name", "counted"});
  const json stats = f.ok({"stats"});
  for (const char* key : {"pushed", "succeeded", "failed", "retried", "dead", "ready", "scheduled",
                          "running", "workers", "uptime_seconds"}) {
    CHECK(stats.contains(key));
  }
  CHECK(stats["pushed"] == 1);
  CHECK(stats["ready"] == 1);
}

TEST_CASE("jqctl creates, lists, shows, replaces, patches and deletes constraints", "[http]") {
  Fixture f;
  TempDir dir;
  const std::string file = dir.file("constraint.json");
  std::ofstream(file) << R"({"name": "mail", "match": {"name": "mail.*"}, "key": "/tenant",
                             "concurrency": 5, "rate": {"limit": 10, "period": 60}})";
  const json created = f.ok({"constraints", "create", "--file", file});
  CHECK(created["name"] == "mail");
  CHECK(created["rate"] == json{{"limit", 10}, {"period", 60}, {"burst", 0}});
  CHECK(created["paused"] == false);

  const ProgramResult again = f.ctl({"constraints", "create", "--file", file});
  CHECK(again.exit_code == kExitConflict);
  check_error_line(again, "constraint mail exists");

  CHECK(f.ok({"constraints", "list"}) == json::array({created}));
  const json shown = f.ok({"constraints", "get", "mail"});
  CHECK(shown["concurrency"] == 5);
  CHECK(shown["waiting"] == 0);
  CHECK(shown["top_keys"] == json::array());

  const json replaced = f.ok({"constraints", "replace", "mail", "--json",
                              R"({"match": {"name": "mail.send"}, "paused": true})"});
  CHECK(replaced["match"]["name"] == "mail.send");
  CHECK(replaced["concurrency"].is_null());
  CHECK(replaced["paused"] == true);

  const json patched = f.ok({"constraints", "patch", "mail", "--file", "-"},
                            R"({"paused": false, "concurrency": 2})");
  CHECK(patched["paused"] == false);
  CHECK(patched["concurrency"] == 2);
  CHECK(patched["match"]["name"] == "mail.send");

  const ProgramResult removed = f.ctl({"constraints", "delete", "mail"});
  CHECK(removed.exit_code == 0);
  CHECK(removed.out.empty());
  const ProgramResult gone = f.ctl({"constraints", "get", "mail"});
  CHECK(gone.exit_code == kExitNotFound);
  check_error_line(gone, "no constraint mail");
}

TEST_CASE("jqctl constraints exits 4 for a missing or bad body and the master's 400", "[http]") {
  Fixture f;
  const ProgramResult no_body = f.ctl({"constraints", "create"});
  CHECK(no_body.exit_code == kExitBadInput);
  check_error_line(no_body, "--file PATH (- for stdin) or --json TEXT");
  const ProgramResult not_object = f.ctl({"constraints", "create", "--json", "[1]"});
  CHECK(not_object.exit_code == kExitBadInput);
  check_error_line(not_object, "--json must hold one constraint (a JSON object)");
  const ProgramResult not_json = f.ctl({"constraints", "create", "--json", "{"});
  CHECK(not_json.exit_code == kExitBadInput);
  check_error_line(not_json, "--json is not valid JSON");
  const ProgramResult both = f.ctl({"constraints", "create", "--json", "{}", "--file", "-"});
  CHECK(both.exit_code == kExitBadInput);
  const ProgramResult invalid =
      f.ctl({"constraints", "create", "--json",
             R"({"name": "c", "match": {"name": "*"}, "rate": {"limit": 1, "period": 0}})"});
  CHECK(invalid.exit_code == kExitBadInput);
  check_error_line(invalid, "rate.period");
  const ProgramResult unknown = f.ctl({"constraints", "patch", "nope", "--json", "{}"});
  CHECK(unknown.exit_code == kExitNotFound);
  CHECK(f.ok({"constraints", "list"}) == json::array());
}

TEST_CASE("jqctl exits 3 for an unknown id", "[http]") {
  Fixture f;
  const ProgramResult r = f.ctl({"job", "0-000000999"});
  CHECK(r.exit_code == kExitNotFound);
  check_error_line(r, "0-000000999");
}

TEST_CASE("jqctl exits 4 for bad input: its own checks, CLI flags and the master's 400", "[http]") {
  Fixture f;
  TempDir dir;
  const std::string file = dir.file("bad.json");
  std::ofstream(file) << R"([{"name": "a"},)";
  const ProgramResult bad_file = f.ctl({"push", "--file", file});
  CHECK(bad_file.exit_code == kExitBadInput);
  check_error_line(bad_file, "not valid JSON");

  const ProgramResult bad_flag = f.ctl({"push", "--name", "a", "--priority", "high"});
  CHECK(bad_flag.exit_code == kExitBadInput);
  check_error_line(bad_flag, "--priority");
  const ProgramResult unknown_flag = f.ctl({"stats", "--verbose"});
  CHECK(unknown_flag.exit_code == kExitBadInput);
  check_error_line(unknown_flag, "--verbose");

  const ProgramResult invalid_job = f.ctl({"push", "--name", ".hidden"});
  CHECK(invalid_job.exit_code == kExitBadInput);
  check_error_line(invalid_job, "name");
  const ProgramResult bad_batch = f.ctl({"push", "--file", "-"}, R"([{"name": "a"}, {"nme": 1}])");
  CHECK(bad_batch.exit_code == kExitBadInput);
  check_error_line(bad_batch, "nme");
  // An argument is sent as written: an integer past 64 bits is the master's 400, not a float.
  const ProgramResult too_big =
      f.ctl({"push", "--name", "a", "--argument", "18446744073709551616"});
  CHECK(too_big.exit_code == kExitBadInput);
  check_error_line(too_big, "64-bit");
  const ProgramResult schedule_too_big =
      f.ctl({"schedules", "create", "--name", "big", "--every", "60", "--job-name", "a",
             "--argument", R"({"n": 18446744073709551616})"});
  CHECK(schedule_too_big.exit_code == kExitBadInput);
  check_error_line(schedule_too_big, "64-bit");
  // A body given whole is sent as it is: a flag beside it would be dropped unsaid (a schedule
  // meant --paused created running), so jqctl refuses the pair.
  const ProgramResult paused_dropped =
      f.ctl({"schedules", "create", "--json", R"({"name": "p", "every": 60, "job": {"name": "a"}})",
             "--paused"});
  CHECK(paused_dropped.exit_code == kExitBadInput);
  check_error_line(paused_dropped, "--paused");
  const ProgramResult two_jobs = f.ctl({"schedules", "create", "--name", "two", "--every", "60",
                                        "--job", R"({"name": "a"})", "--job-name", "b"});
  CHECK(two_jobs.exit_code == kExitBadInput);
  check_error_line(two_jobs, "--job-name");
  CHECK(f.ok({"schedules", "list"}).empty());  // neither was created

  const ProgramResult unknown_command = f.ctl({"stat"});
  CHECK(unknown_command.exit_code == kExitBadInput);
  check_error_line(unknown_command, "unknown subcommand 'stat'");
  const ProgramResult zero_timeout = f.ctl({"--timeout", "0", "stats"});
  CHECK(zero_timeout.exit_code == kExitBadInput);
  check_error_line(zero_timeout, "above 0");
  // Not a CA file: bad input whatever the URL's scheme (the master here speaks http).
  const std::string not_pem = dir.file("not.pem");
  std::ofstream(not_pem) << "not a certificate\n";
  const ProgramResult bad_ca = f.ctl({"--cacert", not_pem, "stats"});
  CHECK(bad_ca.exit_code == kExitBadInput);
  check_error_line(bad_ca, "not a PEM file");

  // A byte order mark (a file from a Windows editor) is dropped, not sent.
  CHECK(f.ctl({"push", "--name", "bom", "--argument", "\xEF\xBB\xBF{\"a\": 1}"}).exit_code == 0);
  CHECK(f.ok({"stats"})["pushed"] == 1);  // the one with a byte order mark
}

TEST_CASE("jqctl exits 5 when nothing listens or the master does not answer in time", "[http]") {
  const ProgramResult refused = jqctl({"--url", url_of(free_port()), "stats"});
  CHECK(refused.exit_code == kExitUnavailable);
  check_error_line(refused, "cannot connect");

  Fixture f;
  const std::string id = f.push({"--name", "nobody.serves", "--keep-result"});
  const auto start = std::chrono::steady_clock::now();
  const ProgramResult slow = f.ctl({"--timeout", "0.3", "result", id, "--wait", "5"});
  CHECK(slow.exit_code == kExitUnavailable);
  check_error_line(slow, "no answer");
  CHECK(std::chrono::steady_clock::now() - start < 4s);
}

TEST_CASE("jqctl takes the master's URL from JQ_URL when --url is absent", "[http]") {
  Fixture f;
  f.push({"--name", "seen"});
  const ProgramResult r = jqctl({"stats"}, {"JQ_URL=" + f.url});
  REQUIRE(r.exit_code == 0);
  CHECK(parsed(r)["pushed"] == 1);
  // --url beats the environment.
  const ProgramResult flag_wins = jqctl({"--url", f.url, "stats"}, {"JQ_URL=http://127.0.0.1:1"});
  CHECK(flag_wins.exit_code == 0);
}

TEST_CASE("jqctl sends --token or JQ_TOKEN as a bearer token and exits 7 when refused", "[http]") {
  Fixture f(
      "auth:\n  tokens:\n"
      "    - {token: jqctl-push-token, role: push}\n"
      "    - {token: jqctl-admin-token, role: admin}\n");
  const ProgramResult anonymous = f.ctl({"stats"});
  CHECK(anonymous.exit_code == kExitAuth);
  check_error_line(anonymous, "--token");

  CHECK(f.ctl({"--token", "jqctl-push-token", "push", "--name", "a"}).exit_code == 0);
  const ProgramResult wrong_role = f.ctl({"--token", "jqctl-push-token", "stats"});
  CHECK(wrong_role.exit_code == kExitAuth);
  check_error_line(wrong_role, "");

  const ProgramResult admin = jqctl({"--url", f.url, "stats"}, {"JQ_TOKEN=jqctl-admin-token"});
  REQUIRE(admin.exit_code == 0);
  CHECK(parsed(admin)["pushed"] == 1);
}

TEST_CASE("jqctl --help documents the exit codes", "[http]") {
  const ProgramResult r = jqctl({"--help"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("Exit codes:") != std::string::npos);
  CHECK(r.out.find("6  conflict") != std::string::npos);
  const ProgramResult sub = jqctl({"dead", "list", "--help"});
  CHECK(sub.exit_code == 0);
  CHECK(sub.out.find("--limit") != std::string::npos);
  CHECK(sub.out.find("Exit codes:") != std::string::npos);
}
