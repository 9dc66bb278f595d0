#include "src/dispatch/dispatcher.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <spdlog/spdlog.h>

#include "api/job_result.hpp"
#include "api/media_type.hpp"
#include "src/dispatch/worker_request.hpp"
#include "src/util/time.hpp"

namespace jq::dispatch {
namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;

constexpr milliseconds kBusyPause{1000};     // 429/503 without Retry-After
constexpr std::size_t kBodySnippetBytes = 200;  // of a non-200 answer, for last_error

std::string snippet(const std::string& body) {
  std::string s = body.substr(0, kBodySnippetBytes);
  for (char& c : s) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  return s;
}

// What the worker's answer means for the job: a result to store, or a failure the master
// writes itself.
struct Verdict {
  enum class Kind { success, failure, release } kind = Kind::failure;
  std::string encoded;  // result or failure object
  bool should_retry = true;
  std::string message;
  AttemptEnd end;
};

Verdict master_failure(api::FailureReason reason, std::string message, std::int64_t now_ms) {
  Verdict v;
  v.kind = Verdict::Kind::failure;
  v.encoded = api::encode_failure(reason, true, message, iso8601_utc(now_ms));
  v.should_retry = true;
  v.message = std::move(message);
  return v;
}

Verdict judge(const WorkerAnswer& answer, const store::ReservedJob& job, std::int64_t now_ms) {
  switch (answer.kind) {
    case WorkerAnswer::Kind::unreachable: {
      Verdict v;
      v.kind = Verdict::Kind::release;
      v.message = answer.error;
      v.end.verdict = AttemptEnd::Verdict::unreachable;
      v.end.error = answer.error;
      return v;
    }
    case WorkerAnswer::Kind::timed_out:
      return master_failure(api::FailureReason::timeout,
                            "no answer within the job's timeout of " +
                                std::to_string(job.record.timeout_ms) + " ms (attempt " +
                                std::to_string(job.record.attempts) + ")",
                            now_ms);
    case WorkerAnswer::Kind::broken:
      return master_failure(api::FailureReason::other, answer.error, now_ms);
    case WorkerAnswer::Kind::answered: break;
  }
  if (answer.status == 429 || answer.status == 503) {
    Verdict v;
    v.kind = Verdict::Kind::release;
    v.message = "worker busy (HTTP " + std::to_string(answer.status) + ")";
    v.end.verdict = AttemptEnd::Verdict::busy;
    v.end.hold_off =
        answer.retry_after_s ? milliseconds(*answer.retry_after_s * 1000) : kBusyPause;
    return v;
  }
  if (answer.status != 200) {
    return master_failure(api::FailureReason::other,
                          "worker answered HTTP " + std::to_string(answer.status) + ": " +
                              snippet(answer.body),
                          now_ms);
  }
  const auto type = api::parse_content_type(answer.content_type).value_or(api::MediaType::msgpack);
  auto result = api::decode_job_result(answer.body, type);
  if (!result) {
    return master_failure(api::FailureReason::other,
                          "worker answered 200 with an invalid result: " + result.error(), now_ms);
  }
  Verdict v;
  v.encoded = std::move(result->encoded);
  if (result->type == api::ResultType::success) {
    v.kind = Verdict::Kind::success;
  } else {
    v.kind = Verdict::Kind::failure;
    v.should_retry = result->should_retry;
    v.message = result->message.empty() ? "the worker reported a failure" : result->message;
  }
  return v;
}

}  // namespace

Dispatcher::Dispatcher(asio::io_context& io, store::DispatchStore& store,
                       workers::WorkerStore& workers)
    : io_(io), store_(store), workers_(workers) {}

void Dispatcher::start(std::shared_ptr<const workers::Endpoint> endpoint,
                       std::shared_ptr<ConnectionPool> pool, store::ReservedJob job, Done done) {
  ++in_flight_;
  asio::co_spawn(io_, attempt(std::move(endpoint), std::move(pool), std::move(job), std::move(done)),
                 [](std::exception_ptr e) {
                   if (!e) return;
                   try {
                     std::rethrow_exception(e);
                   } catch (const std::exception& ex) {
                     spdlog::error("dispatch failed: {}", ex.what());
                   }
                 });
}

asio::awaitable<void> Dispatcher::attempt(std::shared_ptr<const workers::Endpoint> endpoint,
                                          std::shared_ptr<ConnectionPool> pool,
                                          store::ReservedJob job, Done done) {
  AttemptEnd end;
  try {
    end = co_await run_attempt(*endpoint, *pool, std::move(job));
  } catch (const std::exception& e) {
    // The job stays in flight in Redis; the reaper runs it again after its deadline.
    spdlog::error("dispatch to {} failed: {}", endpoint->url, e.what());
  }
  co_await workers_.release(endpoint->id, 1);
  --in_flight_;
  done(std::move(end));
}

asio::awaitable<AttemptEnd> Dispatcher::run_attempt(const workers::Endpoint& endpoint,
                                                    ConnectionPool& pool, store::ReservedJob job) {
  const std::string id = job.id.str();
  const int attempt = job.record.attempts;
  WorkerCall call;
  call.target = endpoint.address.target;
  call.headers = endpoint.headers;
  call.headers.emplace_back("X-Jq-Job-Id", id);
  call.headers.emplace_back("X-Jq-Attempt", std::to_string(attempt));
  if (!job.record.traceparent.empty()) {
    call.headers.emplace_back("traceparent", job.record.traceparent);
  }
  call.body = encode_worker_request(id, job.record, job.deadline_ms);
  call.deadline = std::chrono::steady_clock::now() +
                  milliseconds(std::max<std::int64_t>(0, job.deadline_ms - store_.now_ms()));

  const WorkerAnswer answer = co_await pool.call(std::move(call));
  Verdict v = judge(answer, job, store_.now_ms());
  switch (v.kind) {
    case Verdict::Kind::success: {
      auto r = co_await store_.complete(job.id, attempt, std::move(v.encoded));
      if (!r) spdlog::warn("job {}: result not recorded ({}); it will run again", id, r.error().message);
      spdlog::debug("job {} attempt {} succeeded on {}", id, attempt, endpoint.url);
      co_await workers_.record_outcome(endpoint.id, true, std::string());
      break;
    }
    case Verdict::Kind::failure: {
      auto r = co_await store_.fail(job.id, attempt, std::move(v.encoded), v.should_retry, v.message);
      if (!r) spdlog::warn("job {}: failure not recorded ({}); it will run again", id, r.error().message);
      spdlog::debug("job {} attempt {} failed on {}: {}", id, attempt, endpoint.url, v.message);
      co_await workers_.record_outcome(endpoint.id, false, v.message);
      break;
    }
    case Verdict::Kind::release: {
      auto r = co_await store_.release(job.id, job.record.name, attempt);
      if (!r) spdlog::warn("job {}: not released ({}); it will run again later", id, r.error().message);
      if (v.end.verdict == AttemptEnd::Verdict::unreachable) {
        spdlog::warn("worker {} ({}) unreachable: {}", endpoint.id, endpoint.url, v.message);
      }
      break;
    }
  }
  co_return v.end;
}

}  // namespace jq::dispatch
