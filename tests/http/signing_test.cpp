// Signed dispatches end to end: a worker registered with a secret (through the API or the config
// file) gets X-Jq-Timestamp and X-Jq-Signature on every attempt, and the signature is checked
// here with an HMAC of our own over the exact body the worker received. The secret itself never
// comes back: not in an answer, a log line or a metric.
#include <catch2/catch.hpp>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstdio>
#include <ctime>

#include "tests/support/daemon.hpp"
#include "tests/support/job_calls.hpp"
#include "tests/support/redis_server.hpp"
#include "tests/support/worker.hpp"

using namespace std::chrono_literals;
using jq::test::Daemon;
using jq::test::HttpClient;
using jq::test::RecordedRequest;
using jq::test::RecordingServer;
using jq::test::RecordingWorker;
using jq::test::RedisServer;
using jq::test::wait_until;
using nlohmann::json;

namespace {

const std::string kSecret = "signing-test-secret-3f9a1c";
// Debug lines and the access log on: every line the master could write about a worker is there.
const std::string kVerboseLog = "log:\n  level: debug\n  access: true\nretry:\n  base: 0.05\n";

// The HMAC computed here with OpenSSL's one-shot HMAC() over one joined buffer: not the code
// path of the master (EVP_MAC over the parts), so a mistake there cannot hide behind itself.
std::string expected_signature(const std::string& secret, const std::string& timestamp,
                               const std::string& body) {
  const std::string message = timestamp + "." + body;
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &length);
  std::string hex = "v1=";
  char byte[3];
  for (unsigned int i = 0; i < length; ++i) {
    std::snprintf(byte, sizeof byte, "%02x", mac[i]);
    hex += byte;
  }
  return hex;
}

// Waits for the `n`-th request to `server` and returns it.
RecordedRequest nth_request(const RecordingServer& server, std::size_t n) {
  REQUIRE(wait_until([&] { return server.requests().size() >= n; }, 10s));
  return server.requests()[n - 1];
}

// The request carries a timestamp within a few seconds of now and the signature of its body.
void check_signed(const RecordedRequest& request, const std::string& secret) {
  REQUIRE(request.headers.count("x-jq-timestamp") == 1);
  REQUIRE(request.headers.count("x-jq-signature") == 1);
  const std::string& timestamp = request.headers.at("x-jq-timestamp");
  REQUIRE_FALSE(timestamp.empty());
  CHECK(timestamp.find_first_not_of("0123456789") == std::string::npos);
  CHECK(std::abs(std::stoll(timestamp) - static_cast<long long>(std::time(nullptr))) <= 5);
  CHECK(request.headers.at("x-jq-signature") ==
        expected_signature(secret, timestamp, request.body));
}

json registration(const std::string& url, const std::string& name) {
  return {{"url", url}, {"names", {name}}};
}

}  // namespace

TEST_CASE("a signed worker's dispatch carries a timestamp and a signature of its exact body",
          "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url(), 4, kVerboseLog});
  const HttpClient http = daemon.http();
  RecordingWorker signed_worker;
  RecordingWorker plain_worker;
  json signed_registration = registration(signed_worker.url() + "/run", "signed.job");
  signed_registration["secret"] = kSecret;
  REQUIRE(http.post("/v1/workers", signed_registration).status == 201);
  REQUIRE(http.post("/v1/workers", registration(plain_worker.url() + "/run", "plain.job")).status ==
          201);

  // Binary bytes in the argument: the signature covers the body as bytes, not as text.
  const json job = {{"name", "signed.job"},
                    {"argument", json::binary({0x00, 0x01, 0xfe, 0xff})},
                    {"keep_result", true}};
  const std::vector<std::uint8_t> packed = json::to_msgpack(job);
  const auto pushed = http.post_msgpack("/v1/jobs", std::string(packed.begin(), packed.end()));
  REQUIRE(pushed.status == 201);
  const std::string id = pushed.value()["id"];
  const RecordedRequest request = nth_request(signed_worker, 1);
  CHECK(request.headers.at("x-jq-job-id") == id);
  check_signed(request, kSecret);
  CHECK(request.headers.at("x-jq-signature") !=
        expected_signature("another-secret-of-16", request.headers.at("x-jq-timestamp"),
                           request.body));

  jq::test::push(http, {{"name", "plain.job"}});
  const RecordedRequest plain = nth_request(plain_worker, 1);
  CHECK(plain.headers.count("x-jq-timestamp") == 0);
  CHECK(plain.headers.count("x-jq-signature") == 0);

  const json workers = http.get("/v1/workers").value();
  REQUIRE(workers.size() == 2);
  for (const json& w : workers) {
    CHECK(w["signed"] == (w["url"] == signed_registration["url"]));
    CHECK_FALSE(w.contains("secret"));
  }
}

TEST_CASE("every attempt is signed over its own body", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url(), 4, kVerboseLog});
  const HttpClient http = daemon.http();
  RecordingServer failing({500, "text/plain", "try again"});
  json signed_registration = registration(failing.url() + "/", "flaky");
  signed_registration["secret"] = kSecret;
  REQUIRE(http.post("/v1/workers", signed_registration).status == 201);
  jq::test::push(http, {{"name", "flaky"}, {"max_retry", 1}});
  const RecordedRequest first = nth_request(failing, 1);
  const RecordedRequest second = nth_request(failing, 2);
  CHECK(first.headers.at("x-jq-attempt") == "1");
  CHECK(second.headers.at("x-jq-attempt") == "2");
  CHECK(first.body != second.body);
  check_signed(first, kSecret);
  check_signed(second, kSecret);
}

TEST_CASE("registering a url again without a secret makes it unsigned", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url(), 4, kVerboseLog});
  const HttpClient http = daemon.http();
  RecordingWorker worker;
  json body = registration(worker.url() + "/", "job");
  body["secret"] = kSecret;
  const auto created = http.post("/v1/workers", body);
  REQUIRE(created.status == 201);
  const std::string id = created.value()["id"];
  CHECK(http.get("/v1/workers/" + id).value()["signed"] == true);

  body.erase("secret");
  const auto updated = http.post("/v1/workers", body);
  REQUIRE(updated.status == 200);
  CHECK(updated.value()["id"] == id);
  CHECK(http.get("/v1/workers/" + id).value()["signed"] == false);
  jq::test::push(http, {{"name", "job"}});
  const RecordedRequest request = nth_request(worker, 1);
  CHECK(request.headers.count("x-jq-timestamp") == 0);
  CHECK(request.headers.count("x-jq-signature") == 0);
}

TEST_CASE("a worker in the config file is signed with its secret", "[http]") {
  RedisServer redis;
  RecordingWorker worker;
  Daemon daemon({redis.url(), 4,
                 kVerboseLog + "workers:\n  - url: " + worker.url() +
                     "/\n    names: ['*']\n    secret: '" + kSecret + "'\n"});
  const HttpClient http = daemon.http();
  REQUIRE(wait_until([&] { return http.get("/v1/workers").value().size() == 1; }, 10s));
  CHECK(http.get("/v1/workers").value()[0]["signed"] == true);
  jq::test::push(http, {{"name", "anything"}});
  check_signed(nth_request(worker, 1), kSecret);
}

TEST_CASE("the secret is never shown: not in answers, metrics or the log", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url(), 4, kVerboseLog});
  const HttpClient http = daemon.http();
  RecordingWorker worker;
  json body = registration(worker.url() + "/", "job");
  body["secret"] = kSecret;
  std::vector<std::string> shown;
  const auto created = http.post("/v1/workers", body);
  REQUIRE(created.status == 201);
  const std::string id = created.value()["id"];
  shown.push_back(created.body);
  shown.push_back(http.post("/v1/workers", body).body);  // the update's answer
  jq::test::push(http, {{"name", "job"}});
  nth_request(worker, 1);
  shown.push_back(http.get("/v1/workers").body);
  shown.push_back(http.get("/v1/workers/" + id).body);
  shown.push_back(http.request("GET", "/v1/workers", "", {{"Accept", "application/msgpack"}}).body);
  shown.push_back(http.get("/metrics").body);
  shown.push_back(daemon.log());
  CHECK_THAT(shown[3], Catch::Contains("\"signed\":true"));
  for (const std::string& text : shown) CHECK_THAT(text, !Catch::Contains(kSecret));
}

TEST_CASE("a secret that is too short, too long or not a string is refused with 400", "[http]") {
  RedisServer redis;
  Daemon daemon({redis.url(), 4, kVerboseLog});
  const HttpClient http = daemon.http();
  const std::string too_short = "fifteen-bytes!!";
  for (const json& secret : {json(too_short), json(std::string(257, 's')), json(1234567890123456),
                             json::array({kSecret}), json(nullptr)}) {
    INFO(secret.dump().substr(0, 40));
    json body = registration("http://127.0.0.1:9/", "job");
    body["secret"] = secret;
    const auto res = http.post("/v1/workers", body);
    CHECK(res.status == 400);
    CHECK(res.value()["field"] == "secret");
    CHECK_THAT(res.body, !Catch::Contains(too_short));
  }
  CHECK(http.get("/v1/workers").value().empty());
  CHECK_THAT(daemon.log(), !Catch::Contains(too_short));
}
