// jqworker (the worker the master's tests and benchmarks run against) and the Python example
// worker, over real sockets: what each argument directive answers, /stats, the journal,
// registration.
#include <catch2/catch.hpp>

#include <csignal>
#include <thread>

#include "tests/support/daemon.hpp"
#include "tests/support/worker.hpp"
#include "tests/support/worker_journal.hpp"

namespace jq::test {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string msgpack_of(const json& value) {
  const auto bytes = json::to_msgpack(value);
  return std::string(bytes.begin(), bytes.end());
}

// A job as the master sends it, with `argument` as raw MessagePack bytes.
std::string job_body(const std::string& id, int attempt, const std::string& raw_argument) {
  return "\x88" + msgpack_of("id") + msgpack_of(id) + msgpack_of("name") + msgpack_of("test") +
         msgpack_of("argument") + raw_argument + msgpack_of("priority") + msgpack_of(0) +
         msgpack_of("attempt") + msgpack_of(attempt) + msgpack_of("max_retry") + msgpack_of(3) +
         msgpack_of("timeout") + msgpack_of(30.0) + msgpack_of("deadline") +
         msgpack_of("2030-01-01T00:00:00.000Z");
}

HttpResult post_job(const Worker& worker, const std::string& id, int attempt,
                    const json& argument) {
  const Headers headers = {{"Accept", "application/msgpack"},
                           {"X-Jq-Job-Id", id},
                           {"X-Jq-Attempt", std::to_string(attempt)}};
  return worker.http().post_msgpack("/", job_body(id, attempt, msgpack_of(argument)), headers);
}

void check_failure(const HttpResult& r, const std::string& reason, bool should_retry) {
  REQUIRE(r.status == 200);
  const json result = r.value();
  CHECK(result["type"] == "failure");
  CHECK(result["reason"] == reason);
  CHECK(result["should_retry"] == should_retry);
  CHECK(result["finished_at"].is_string());
  CHECK(result["message"].is_string());
  CHECK(result.contains("error"));
}

TEST_CASE("jqworker echoes the argument byte for byte", "[http]") {
  Worker worker;
  // [uint16 1, float32 1.0, "x"]: re-encoding would shrink 1 and widen the float.
  const std::string raw = std::string("\x93\xcd\x00\x01\xca\x3f\x80\x00\x00\xa1x", 11);
  const auto r = worker.http().post_msgpack("/", job_body("j1", 1, raw));
  REQUIRE(r.status == 200);
  CHECK(r.header("content-type") == "application/msgpack");
  CHECK(r.body.find(raw) != std::string::npos);
  const json result = r.value();
  CHECK(result["type"] == "success");
  CHECK(result["result"] == json::array({1, 1.0, "x"}));
  CHECK(result["finished_at"].get<std::string>().back() == 'Z');
}

TEST_CASE("jqworker answers a job without an argument with a nil result", "[http]") {
  Worker worker;
  const std::string body =
      "\x82" + msgpack_of("id") + msgpack_of("j") + msgpack_of("attempt") + msgpack_of(1);
  const auto r = worker.http().post_msgpack("/", body);
  REQUIRE(r.status == 200);
  CHECK(r.value()["result"].is_null());
}

TEST_CASE("jqworker waits sleep_ms before answering", "[http]") {
  Worker worker;
  const auto start = Clock::now();
  const auto r = post_job(worker, "j", 1, {{"sleep_ms", 250}});
  CHECK(r.status == 200);
  CHECK(Clock::now() - start >= 250ms);
  CHECK(r.value()["type"] == "success");
}

TEST_CASE("jqworker fails on request, with should_retry as asked", "[http]") {
  Worker worker;
  const auto retry = post_job(worker, "j", 2, {{"fail", true}});
  check_failure(retry, "other", true);
  CHECK(retry.value()["message"] == "failed on purpose (attempt 2)");
  CHECK(retry.value()["error"] == "requested failure");
  check_failure(post_job(worker, "j", 1, {{"fail", true}, {"should_retry", false}}), "other",
                false);
}

TEST_CASE("jqworker --answer json answers successes and failures in JSON", "[http]") {
  Worker worker({"--answer", "json"});
  const json argument = {{"n", 1}, {"list", {1.5, "x", nullptr}}};
  const auto ok = post_job(worker, "j", 1, argument);
  REQUIRE(ok.status == 200);
  CHECK(ok.header("content-type") == "application/json");
  const json success = json::parse(ok.body);
  CHECK(success["type"] == "success");
  CHECK(success["result"] == argument);
  CHECK(success["finished_at"].get<std::string>().back() == 'Z');
  const auto failed = post_job(worker, "j", 2, {{"fail", true}});
  CHECK(failed.header("content-type") == "application/json");
  check_failure(failed, "other", true);
  CHECK(failed.value()["message"] == "failed on purpose (attempt 2)");
}

TEST_CASE("jqworker --no-stats answers jobs and keeps no record of them", "[http]") {
  Worker worker({"--no-stats"});
  const auto r = post_job(worker, "j", 1, "hello");
  REQUIRE(r.status == 200);
  CHECK(r.value()["result"] == "hello");
  const json stats = worker.stats();
  CHECK(stats["received"] == 0);
  CHECK(stats["by_job"].empty());
}

TEST_CASE("jqworker fails the attempts before fail_until and succeeds from it on", "[http]") {
  Worker worker;
  const json argument = {{"fail_until", 3}};
  check_failure(post_job(worker, "j", 1, argument), "other", true);
  check_failure(post_job(worker, "j", 2, argument), "other", true);
  const auto third = post_job(worker, "j", 3, argument);
  REQUIRE(third.status == 200);
  CHECK(third.value()["type"] == "success");
  CHECK(third.value()["result"] == argument);
}

TEST_CASE("jqworker answers the requested status, with Retry-After when asked", "[http]") {
  Worker worker;
  const auto busy = post_job(worker, "j", 1, {{"status", 503}, {"retry_after", 7}});
  CHECK(busy.status == 503);
  CHECK(busy.header("retry-after") == "7");
  const auto error = post_job(worker, "j", 1, {{"status", 500}});
  CHECK(error.status == 500);
  CHECK(error.header("retry-after").empty());
  CHECK(post_job(worker, "j", 1, {{"status", 429}}).status == 429);
}

TEST_CASE("jqworker answers 200 with garbage on request", "[http]") {
  Worker worker;
  const auto map = post_job(worker, "j", 1, {{"garbage", true}});
  REQUIRE(map.status == 200);
  CHECK(map.value()["type"] != "success");
  CHECK(map.value()["type"] != "failure");
  const auto bytes = post_job(worker, "j", 1, {{"garbage", "bytes"}});
  REQUIRE(bytes.status == 200);
  CHECK_THROWS(json::from_msgpack(bytes.body));
}

TEST_CASE("jqworker answers a timeout failure on request", "[http]") {
  Worker worker;
  check_failure(post_job(worker, "j", 4, {{"timeout_reason", true}}), "timeout", true);
}

TEST_CASE("jqworker closes the connection without answering on request", "[http]") {
  Worker worker;
  const std::string body = job_body("j", 1, msgpack_of({{"close", true}}));
  RawConnection connection(worker.port());
  REQUIRE(
      connection.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/msgpack\r\n"
                      "Content-Length: " +
                      std::to_string(body.size()) + "\r\n\r\n" + body));
  bool closed = false;
  CHECK(connection.read_until_closed(5s, &closed).empty());
  CHECK(closed);
}

TEST_CASE("jqworker answers 400 to a body that is not a job", "[http]") {
  Worker worker;
  CHECK(worker.http().post_msgpack("/", "not msgpack").status == 400);
  CHECK(worker.http().post_msgpack("/", msgpack_of(json::array({1, 2}))).status == 400);
  CHECK(worker.http().post_msgpack("/", msgpack_of({{"id", "j"}})).status == 400);
  CHECK(worker.http().post_msgpack("/", msgpack_of({{"id", 5}, {"attempt", 1}})).status == 400);
  CHECK(worker.http().post_msgpack("/", msgpack_of({{"id", "j"}, {"attempt", 1}})).status == 200);
  CHECK(worker.http().post_msgpack("/", job_body("j", 1, "\xc1")).status == 400);
  // An array that claims 4 billion entries: refused, not allocated.
  CHECK(worker.http().post_msgpack("/", job_body("j", 1, "\xdd\xff\xff\xff\xff")).status == 400);
  // Bytes after the job's map; a key that is no string (ignored, as are unknown keys); an
  // attempt sent as a float.
  CHECK(
      worker.http().post_msgpack("/", msgpack_of({{"id", "j"}, {"attempt", 1}}) + "\x01").status ==
      400);
  CHECK(worker.http()
            .post_msgpack("/", "\x83" + msgpack_of(7) + msgpack_of("x") + msgpack_of("id") +
                                   msgpack_of("j") + msgpack_of("attempt") + msgpack_of(1))
            .status == 200);
  CHECK(worker.http().post_msgpack("/", msgpack_of({{"id", "j"}, {"attempt", 2.0}})).status == 200);
}

TEST_CASE("jqworker /stats counts requests, attempts per job and the last headers", "[http]") {
  Worker worker;
  post_job(worker, "a", 1, {{"fail", true}});
  post_job(worker, "b", 1, nullptr);
  post_job(worker, "a", 2, nullptr);
  worker.http().post_msgpack("/", job_body("c", 1, msgpack_of(1)), {{"X-Custom-Token", "s3cret"}});
  json stats = worker.stats();
  CHECK(stats["received"] == 4);
  CHECK(stats["in_flight"] == 0);
  CHECK(stats["max_in_flight"] == 1);
  CHECK(stats["by_job"]["a"] == json::array({1, 2}));
  CHECK(stats["by_job"]["b"] == json::array({1}));
  CHECK(stats["order"] == json::array({"a", "b", "a", "c"}));
  CHECK(stats["headers_seen"] == json{{"x-custom-token", "s3cret"}});

  worker.reset_stats();
  stats = worker.stats();
  CHECK(stats["received"] == 0);
  CHECK(stats["by_job"].empty());
  CHECK(stats["order"].empty());
  CHECK(stats["headers_seen"].empty());
}

TEST_CASE("jqworker max_in_flight counts the jobs it runs at once", "[http]") {
  const std::string io_threads = GENERATE("1", "3");
  Worker worker({"--threads", io_threads});
  constexpr int kParallel = 5;
  const auto start = Clock::now();
  std::vector<std::thread> threads;
  for (int i = 0; i < kParallel; ++i) {
    threads.emplace_back([&worker, i] {
      post_job(worker, "job-" + std::to_string(i), 1, {{"sleep_ms", 400}});
    });
  }
  for (auto& t : threads) t.join();
  CHECK(Clock::now() - start < 400ms * kParallel);  // they slept side by side
  const json stats = worker.stats();
  INFO("--threads " << io_threads << ": " << stats.dump());
  CHECK(stats["received"] == kParallel);
  CHECK(stats["max_in_flight"] == kParallel);
  CHECK(stats["in_flight"] == 0);
}

TEST_CASE("jqworker exits 0 on SIGTERM and SIGINT", "[http]") {
  Worker term;
  CHECK(term.stop(SIGTERM, 5s).value_or(-1) == 0);
  Worker interrupt;
  CHECK(interrupt.stop(SIGINT, 5s).value_or(-1) == 0);
}

TEST_CASE("jqworker --journal records each attempt's start and end, and a kill keeps them",
          "[http]") {
  TempDir dir;
  const std::string path = dir.file("journal");
  Worker worker({"--journal", path});
  post_job(worker, "a", 1, nullptr);
  post_job(worker, "b", 2, {{"fail", true}});
  std::thread slow([&worker] {
    try {
      post_job(worker, "c", 1, {{"sleep_ms", 60'000}});
    } catch (const std::exception&) {  // the worker is killed before it answers
    }
  });
  REQUIRE(wait_until([&] { return read_file(path).find("start c 1") != std::string::npos; }, 5s));
  CHECK(worker.stop(SIGKILL, 5s) == 128 + SIGKILL);
  slow.join();
  CHECK(read_file(path) == "start a 1\nend a 1 success\nstart b 2\nend b 2 other\nstart c 1\n");
  WorkerJournal journal;
  journal.add(read_file(path));
  CHECK(journal.starts == 3);
  CHECK(journal.successes_by_job == std::map<std::string, int>{{"a", 1}});
  CHECK(journal.overlapping.empty());  // c was still running when the process died: no overlap
}

TEST_CASE("two attempts of one job running at once show in jqworker's journal", "[http]") {
  TempDir dir;
  const std::string path = dir.file("journal");
  Worker worker({"--journal", path});
  std::vector<std::thread> both;
  for (int attempt : {1, 2}) {
    both.emplace_back([&worker, attempt] { post_job(worker, "j", attempt, {{"sleep_ms", 300}}); });
  }
  for (auto& t : both) t.join();
  post_job(worker, "k", 1, nullptr);
  post_job(worker, "k", 2, nullptr);  // one after the other: a rerun, not an overlap
  WorkerJournal journal;
  journal.add(read_file(path));
  CHECK(journal.overlapping == std::set<std::string>{"j"});
  CHECK(journal.starts_by_job == std::map<std::string, int>{{"j", 2}, {"k", 2}});
  CHECK(journal.duplicate_successes() == 2);
}

TEST_CASE("jqworker --register posts its registration and heartbeats every ttl/3", "[http]") {
  FakeMaster master;
  Worker worker({"--register", master.url(), "--names", "a,b", "--concurrency", "3", "--ttl", "1",
                 "--token", "T0k"});
  REQUIRE(wait_until([&] { return master.requests().size() >= 3; }, 3s));
  const auto requests = master.requests();
  const auto& first = requests.front();
  CHECK(first.method == "POST");
  CHECK(first.target == "/v1/workers");
  CHECK(first.headers.at("authorization") == "Bearer T0k");
  CHECK(first.headers.at("content-type") == "application/json");
  const json expected = {
      {"url", worker.url()}, {"names", {"a", "b"}}, {"concurrency", 3}, {"ttl", 1}};
  CHECK(json::parse(first.body) == expected);
  CHECK(requests.back().body == first.body);
}

TEST_CASE("jqworker --register without a ttl registers once", "[http]") {
  FakeMaster master;
  Worker worker({"--register", master.url() + "/"});
  // The worker logs that it will not register again as it leaves its registration loop.
  REQUIRE(wait_until(
      [&] { return worker.log().find("no ttl: not registering again") != std::string::npos; }, 3s));
  const auto requests = master.requests();
  REQUIRE(requests.size() == 1);
  CHECK(requests[0].headers.count("authorization") == 0);
  const json expected = {{"url", worker.url()}, {"names", {"*"}}, {"concurrency", 8}};
  CHECK(json::parse(requests[0].body) == expected);
}

TEST_CASE("jqworker --register refuses a master URL by the rules of registered URLs", "[http]") {
  struct Case {
    const char* url;
    const char* error;
  };
  const Case cases[] = {
      {"http://user:pw@127.0.0.1:1/", "--register: the master URL must not contain user:password@"},
      {"http://:8080/", "--register: the master URL must name a host"},
      {"https://127.0.0.1:1/", "--register: the master URL must start with http://"},
      {"http://127.0.0.1:0/", "--register: the master URL has an invalid port \"0\""},
      {"http://127.0.0.1:1/?a=b", "--register: the master URL must not have a ?query"},
  };
  for (const Case& c : cases) {
    INFO(c.url);
    TempDir dir;
    ChildProcess worker({worker_binary(), "--listen", "127.0.0.1:0", "--register", c.url},
                        dir.file("log"));
    CHECK(worker.wait(5s) == 2);
    CHECK(read_file(dir.file("log")).find(c.error) != std::string::npos);
  }
}

TEST_CASE("jqworker --register makes jqmaster list it and dispatch to it", "[http]") {
  Daemon master(DaemonOptions{});
  const auto http = master.http();
  Worker worker({"--register", "http://127.0.0.1:" + std::to_string(master.port()), "--names",
                 "reg.echo", "--concurrency", "2", "--ttl", "30"});
  REQUIRE(wait_until([&] { return http.get("/v1/workers").value().size() == 1; }, 10s));
  const json registered = http.get("/v1/workers").value()[0];
  CHECK(registered["url"] == worker.url());
  CHECK(registered["names"] == json::array({"reg.echo"}));
  CHECK(registered["concurrency"] == 2);
  const auto pushed =
      http.post("/v1/jobs", {{"name", "reg.echo"}, {"argument", {1, 2}}, {"keep_result", true}});
  REQUIRE(pushed.status == 201);
  const std::string id = pushed.value()["id"];
  const auto result = http.get("/v1/jobs/" + id + "/result?wait=20");
  REQUIRE(result.status == 200);
  CHECK(result.value()["type"] == "success");
  CHECK(result.value()["result"] == json::array({1, 2}));
  CHECK(worker.stats()["by_job"][id] == json::array({1}));
}

bool python_has_msgpack() {
  TempDir dir;
  ChildProcess check({"/usr/bin/python3", "-c", "import msgpack"}, dir.file("check.log"));
  return check.wait(10s) == 0;
}

TEST_CASE("the Python example worker sums, echoes and reports exceptions as failures", "[http]") {
  if (!python_has_msgpack()) {
    WARN("skipped: /usr/bin/python3 cannot import msgpack (apt-get install python3-msgpack)");
    return;
  }
  TempDir dir;
  const std::string log_file = dir.file("worker.log");
  ChildProcess python({"/usr/bin/python3", python_worker_script(), "--listen", "127.0.0.1:0"},
                      log_file);
  const auto port = wait_for_listening_port(python, log_file, 10s);
  REQUIRE(port);
  INFO(read_file(log_file));
  const HttpClient http(*port);
  const auto post = [&](const std::string& name, const json& argument) {
    const json job = {{"id", "p1"},           {"name", name},
                      {"argument", argument}, {"priority", 0},
                      {"attempt", 1},         {"max_retry", 3},
                      {"timeout", 30.0},      {"deadline", "2030-01-01T00:00:00Z"}};
    return http.post_msgpack("/", msgpack_of(job), {{"Accept", "application/msgpack"}});
  };
  const auto sum = post("sum", {1, 2, 3.5});
  REQUIRE(sum.status == 200);
  CHECK(sum.header("content-type") == "application/msgpack");
  CHECK(sum.value()["type"] == "success");
  CHECK(sum.value()["result"] == 6.5);
  CHECK(sum.value()["finished_at"].is_string());
  CHECK(post("echo", {{"k", "v"}}).value()["result"] == json{{"k", "v"}});
  const auto bad = post("sum", {1, "two"});
  REQUIRE(bad.status == 200);
  CHECK(bad.value()["type"] == "failure");
  CHECK(bad.value()["reason"] == "other");
  CHECK(bad.value()["should_retry"] == true);
  CHECK(http.post_msgpack("/", "nonsense").status == 400);
}

}  // namespace
}  // namespace jq::test
