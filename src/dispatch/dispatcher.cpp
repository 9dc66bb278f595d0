#include "src/dispatch/dispatcher.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "api/job_result.hpp"
#include "api/media_type.hpp"
#include "src/dispatch/signature.hpp"
#include "src/dispatch/worker_request.hpp"
#include "src/log/event.hpp"
#include "src/util/time.hpp"

namespace jq::dispatch {
namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;

constexpr milliseconds kBusyPause{1000};  // 429/503 without Retry-After
// 429/503 with Retry-After: 0 (or a date already past, a worker's clock behind): without a
// pause the job would go straight back to the same worker, in a loop.
constexpr milliseconds kMinBusyPause{100};
constexpr std::size_t kBodySnippetBytes = 200;  // of a non-200 answer, for last_error
// Between calls that record an attempt's end while Redis cannot take it
// (Dispatcher::again_while_unavailable).
constexpr milliseconds kFirstRecordPause{50};
constexpr milliseconds kMaxRecordPause{1000};

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

Verdict judge(const WorkerAnswer& answer, const store::ReservedJob& job, std::int64_t now_ms,
              milliseconds max_busy_pause) {
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
                                std::to_string(job.record->timeout_ms) + " ms (attempt " +
                                std::to_string(job.record->attempts) + ")",
                            now_ms);
    case WorkerAnswer::Kind::broken:
      return master_failure(api::FailureReason::other, answer.error, now_ms);
    case WorkerAnswer::Kind::answered:
      break;
  }
  if (answer.status == 429 || answer.status == 503) {
    Verdict v;
    v.kind = Verdict::Kind::release;
    v.message = "worker busy (HTTP " + std::to_string(answer.status) + ")";
    v.end.verdict = AttemptEnd::Verdict::busy;
    // A worker cannot freeze its endpoint for days with a large Retry-After.
    v.end.hold_off = answer.retry_after
                         ? std::min(std::max(*answer.retry_after, kMinBusyPause), max_busy_pause)
                         : kBusyPause;
    return v;
  }
  if (answer.status != 200) {
    return master_failure(
        api::FailureReason::other,
        "worker answered HTTP " + std::to_string(answer.status) + ": " + snippet(answer.body),
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

// Push to done, in seconds.
double since_enqueued_s(const store::JobRecord& record, std::int64_t now_ms) {
  return static_cast<double>(std::max<std::int64_t>(0, now_ms - record.enqueued_at_ms)) / 1000.0;
}

}  // namespace

Dispatcher::Dispatcher(asio::io_context& io, store::DispatchStore& store,
                       workers::WorkerStore& workers, events::ResultWaiters& waiters,
                       metrics::Metrics& metrics, DispatchOptions options)
    : io_(io),
      store_(store),
      workers_(workers),
      waiters_(waiters),
      metrics_(metrics),
      options_(options) {}

namespace {

// The polls claimed for a result get deliver() exactly once, also when the coroutine ends early
// (they would wait on for it otherwise).
class ClaimedPolls {
 public:
  explicit ClaimedPolls(std::vector<std::shared_ptr<events::ResultWaiters::Ticket>> polls)
      : polls_(std::move(polls)) {}
  ClaimedPolls(const ClaimedPolls&) = delete;
  ClaimedPolls& operator=(const ClaimedPolls&) = delete;
  ~ClaimedPolls() { deliver(std::nullopt); }
  bool empty() const { return polls_.empty(); }
  // How many of them are counted in the job's watch key.
  std::int64_t counted() const {
    return std::count_if(polls_.begin(), polls_.end(),
                         [](const auto& t) { return t->counted.load(); });
  }
  void deliver(std::optional<std::string> result) {
    if (!polls_.empty())
      events::ResultWaiters::deliver(std::exchange(polls_, {}), std::move(result));
  }

 private:
  std::vector<std::shared_ptr<events::ResultWaiters::Ticket>> polls_;
};

}  // namespace

// A coroutine of its own only once the first call failed: the answers Redis takes at once (all
// but a few) cost no frame more than before.
template <class Result, class Record, class Failed>
asio::awaitable<Result> Dispatcher::again_while_unavailable(const store::ReservedJob& job,
                                                            std::string_view what, Result r,
                                                            Record record, Failed failed) {
  milliseconds pause = kFirstRecordPause;
  for (bool first = true; !r; first = false) {
    const store::StoreErrc code = r.error().code;
    const bool passing =
        code == store::StoreErrc::unavailable || code == store::StoreErrc::out_of_memory;
    if (!passing || store_.now_ms() + pause.count() >= job.deadline_ms + store::kReapGraceMs) {
      break;
    }
    if (first) {
      spdlog::warn(
          "job {}: its {} is not recorded yet ({}); trying again while Redis cannot "
          "take it",
          job.id.str(), what, r.error().message);
      failed();
    }
    const auto executor = co_await asio::this_coro::executor;  // apart: g++ 12, as in Cluster
    asio::steady_timer timer(executor, pause);
    co_await timer.async_wait(asio::use_awaitable);
    pause = std::min(pause * 2, kMaxRecordPause);
    r = co_await record();
  }
  co_return r;
}

asio::awaitable<bool> Dispatcher::complete(const store::ReservedJob& job, const std::string& id,
                                           int attempt, std::string result) {
  // Claimed before the call, so that a poll cannot start waiting on the stored result in
  // between; from here on those polls wait for deliver() whatever the call's outcome.
  ClaimedPolls polls(job.record->keep_result
                         ? waiters_.claim(id)
                         : std::vector<std::shared_ptr<events::ResultWaiters::Ticket>>{});
  std::optional<std::string> kept;
  std::optional<std::int64_t> handed_to;
  if (!polls.empty()) {
    kept = result;
    handed_to = polls.counted();
  }
  // A result nobody keeps does not go to Redis: a large one would cost its bytes twice there
  // (the call's arguments, then a Lua string) for nothing.
  if (!job.record->keep_result) result.clear();
  // A failed call may still have run, and then nothing stored the result (a later call then
  // finds the attempt stale): the worker did succeed, so the polls get it either way (at least
  // once, as the job may run again), at once rather than after the calls made again.
  const auto record = [&] {
    return store_.complete(job.id, attempt, result, handed_to, job.record->constraints);
  };
  auto r = co_await record();
  if (!r) {
    r = co_await again_while_unavailable(job, "success", std::move(r), record,
                                         [&] { polls.deliver(std::move(kept)); });
  }
  if (!r) {
    spdlog::warn("job {}: its success may not be recorded ({}); if not, it will run again", id,
                 r.error().message);
  }
  const bool handed = !r || *r == store::Completed::handed;
  polls.deliver(handed ? std::move(kept) : std::nullopt);  // none left after a failed call
  const bool recorded = r && *r != store::Completed::stale;
  co_return recorded;
}

void Dispatcher::start(std::shared_ptr<const workers::Endpoint> endpoint,
                       std::shared_ptr<ConnectionPool> pool, store::ReservedJob job, Done done) {
  ++in_flight_;
  asio::co_spawn(io_,
                 attempt(std::move(endpoint), std::move(pool), std::move(job), std::move(done)),
                 [](std::exception_ptr e) {
                   if (!e) return;
                   try {
                     std::rethrow_exception(e);
                   } catch (const std::exception& ex) {
                     spdlog::error("dispatch failed: {}", ex.what());
                   }
                 });
}

// Only jobs that keep their result: no poll waits for the others.
void Dispatcher::will_run(const store::ReservedJob& job) {
  if (job.record->keep_result) waiters_.running_here(job.id.str());
}

void Dispatcher::wont_run(const store::ReservedJob& job) {
  if (job.record->keep_result) waiters_.ended_here(job.id.str());
}

asio::awaitable<void> Dispatcher::attempt(std::shared_ptr<const workers::Endpoint> endpoint,
                                          std::shared_ptr<ConnectionPool> pool,
                                          store::ReservedJob job, Done done) {
  AttemptEnd end;
  const metrics::Metrics::Worker& on_worker = metrics_.worker(endpoint->url);
  on_worker.inflight.add(1);
  metrics_.job(job.record->name).dispatched.inc();
  // After the outcome is recorded: a poll woken now finds the job queued again, failed or done.
  const std::optional<std::string> here =
      job.record->keep_result ? std::optional<std::string>(job.id.str()) : std::nullopt;
  try {
    co_await run_attempt(*endpoint, *pool, std::move(job), done);
  } catch (const std::exception& e) {
    // The job stays in flight in Redis; the reaper runs it again after its deadline.
    spdlog::error("dispatch to {} failed: {}", endpoint->url, e.what());
  } catch (...) {
    spdlog::error("dispatch to {} failed", endpoint->url);
  }
  if (here) waiters_.ended_here(*here);
  on_worker.inflight.add(-1);
  --in_flight_;
  if (done) done(std::move(end));
}

asio::awaitable<void> Dispatcher::run_attempt(const workers::Endpoint& endpoint,
                                              ConnectionPool& pool, store::ReservedJob job,
                                              Done& done) {
  const std::string id = job.id.str();
  const int attempt = job.record->attempts;
  WorkerCall call;
  call.target = endpoint.address.target;
  call.headers = endpoint.headers;
  call.headers.emplace_back("X-Jq-Job-Id", id);
  call.headers.emplace_back("X-Jq-Attempt", std::to_string(attempt));
  if (!job.record->traceparent.empty()) {
    call.headers.emplace_back("traceparent", job.record->traceparent);
  }
  call.body = encode_worker_request(id, *job.record, job.deadline_ms);
  call.max_answer_bytes = options_.max_result_bytes;
  call.deadline = std::chrono::steady_clock::now() +
                  milliseconds(std::max<std::int64_t>(0, job.deadline_ms - store_.now_ms()));

  const auto signing = endpoint.secret.empty()
                           ? Expected<void, std::string>{}
                           : sign_call(call, endpoint.secret, store_.now_ms() / 1000);

  const auto sent = std::chrono::steady_clock::now();
  WorkerAnswer answer;
  if (signing) {
    answer = co_await pool.call(std::move(call));
  } else {
    // Never sent unsigned: like an unreachable endpoint, the attempt does not count.
    answer.kind = WorkerAnswer::Kind::unreachable;
    answer.error = "the dispatch could not be signed: " + signing.error();
  }
  const auto took = std::chrono::steady_clock::now() - sent;
  const double latency_ms = std::chrono::duration<double, std::milli>(took).count();
  if (answer.kind != WorkerAnswer::Kind::unreachable) {
    metrics_.worker(endpoint.url).dispatch_duration.observe(latency_ms / 1000);
  }
  Verdict v = judge(answer, job, store_.now_ms(), options_.max_busy_pause);
  v.end.took = std::chrono::duration_cast<std::chrono::microseconds>(took);
  // The endpoint is free again as soon as it answered: its slot can take the next job while
  // the outcome is being recorded.
  std::exchange(done, nullptr)(v.end);
  // One structured line per attempt: successes at debug (they are the bulk), the rest at info.
  auto log_attempt = [&](spdlog::level::level_enum level, std::string_view outcome) {
    if (!spdlog::should_log(level)) return;  // the fields cost more than the check
    log::event(level, "job attempt",
               {{"job_id", id},
                {"name", job.record->name},
                {"attempt", attempt},
                {"endpoint", endpoint.url},
                {"outcome", outcome},
                {"latency_ms", latency_ms},
                {"error", v.message}});
  };
  switch (v.kind) {
    case Verdict::Kind::success: {
      if (co_await complete(job, id, attempt, std::move(v.encoded))) count_success(*job.record);
      log_attempt(spdlog::level::debug, "succeeded");
      workers_.record_outcome(endpoint.id, true, std::string());
      break;
    }
    case Verdict::Kind::failure: {
      const auto record = [&] {
        return store_.fail(job.id, attempt, v.encoded, v.should_retry, v.message,
                           job.record->constraints);
      };
      auto r = co_await record();
      if (!r) r = co_await again_while_unavailable(job, "failure", std::move(r), record, [] {});
      if (!r)
        spdlog::warn("job {}: failure not recorded ({}); it will run again", id, r.error().message);
      if (r && *r != store::FailOutcome::stale) count_failure(*job.record, *r);
      const bool dead = r && *r == store::FailOutcome::dead;
      log_attempt(
          spdlog::level::info,
          dead ? "dead"
               : (r && *r == store::FailOutcome::retry_scheduled ? "retry_scheduled" : "failed"));
      workers_.record_outcome(endpoint.id, false, v.message);
      break;
    }
    case Verdict::Kind::release: {
      // Unreachable, the worker never got the job: its rate steps go back with its attempt (a
      // rate counts dispatches actually sent); a busy answer was a dispatch, and keeps them.
      const bool unsent = v.end.verdict == AttemptEnd::Verdict::unreachable;
      if (v.end.verdict == AttemptEnd::Verdict::busy) {
        // Announced before the job goes back, so that the other masters, woken by its return,
        // have already heard to hold the endpoint back (on one Redis, in this order).
        co_await workers_.mark_busy(endpoint.id, store_.now_ms() + v.end.hold_off.count());
      }
      // The leases first, again while Redis refuses them (they are named by the attempt's
      // number, so a release refused before it ran may go again). Not when a release's answer
      // was lost: it may still run once the job is given back and reserved again under the
      // same number (a given-back attempt does not count), and free that attempt's lease; the
      // job then stays for the reaper, which counts the attempt. The job again while Redis
      // cannot take it: releaseJob is fenced by the token of the reservation too, so one sent
      // again after a lost answer never gives back a later attempt. What is still lost is made
      // up for by the reaper after the deadline.
      const auto release_leases = [&]() -> asio::awaitable<Expected<bool, store::StoreError>> {
        const store::LeaseRelease done = co_await store_.release_leases(job, unsent);
        if (done == store::LeaseRelease::released) co_return true;
        const bool refused = done == store::LeaseRelease::refused;
        co_return unexpected(store::StoreError{
            refused ? store::StoreErrc::unavailable : store::StoreErrc::internal,
            refused ? "its leases were not released" : "its leases' release may not have run"});
      };
      Expected<bool, store::StoreError> r = co_await release_leases();
      if (!r) {
        r = co_await again_while_unavailable(job, "release", std::move(r), release_leases, [] {});
      }
      if (r) {
        const auto give_back = [&] { return store_.give_back(job); };
        r = co_await give_back();
        if (!r)
          r = co_await again_while_unavailable(job, "release", std::move(r), give_back, [] {});
      }
      if (!r)
        spdlog::warn("job {}: not released ({}); it will run again later", id, r.error().message);
      log_attempt(spdlog::level::info, v.end.verdict == AttemptEnd::Verdict::unreachable
                                           ? "endpoint_unreachable"
                                           : "endpoint_busy");
      break;
    }
  }
}

// The latency goes in before the counters, so a scrape that sees a job counted sees its latency.
void Dispatcher::count_success(const store::JobRecord& record) {
  metrics_.job_latency().observe(since_enqueued_s(record, store_.now_ms()));
  metrics_.job(record.name).succeeded.inc();
}

void Dispatcher::count_failure(const store::JobRecord& record, store::FailOutcome outcome) {
  const bool dead = outcome == store::FailOutcome::dead;
  if (dead) metrics_.job_latency().observe(since_enqueued_s(record, store_.now_ms()));
  const metrics::Metrics::Job& counters = metrics_.job(record.name);
  counters.failed.inc();
  if (outcome == store::FailOutcome::retry_scheduled) counters.retried.inc();
  if (dead) counters.dead.inc();
}

}  // namespace jq::dispatch
