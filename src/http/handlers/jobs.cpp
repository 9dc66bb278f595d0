#include "src/http/handlers/jobs.hpp"

#include <algorithm>

#include <boost/asio/this_coro.hpp>

#include "api/body.hpp"
#include "api/query.hpp"
#include "api/traceparent.hpp"
#include "src/http/handlers/job_view.hpp"
#include "src/http/handlers/store_errors.hpp"
#include "src/http/respond.hpp"
#include "src/util/time.hpp"

namespace jq::http {
namespace {

using asio::awaitable;
using nlohmann::json;

constexpr double kMaxWaitSeconds = 60;
// A job stays watched in Redis this much longer than its pusher waits: the wait starts once the
// store answered, and must never outlast the watch.
constexpr std::chrono::milliseconds kWatchMargin{5000};
// How often a poll of a job that keeps no result looks whether it has ended: soon at first, then
// every second.
constexpr std::chrono::milliseconds kLookFirst{100};
constexpr std::chrono::milliseconds kLookAtMost{1000};

Response not_found(const Request& req, std::string_view id) {
  return respond_error(req, api::ErrorCode::not_found, "no job " + std::string(id));
}

awaitable<Response> push(store::JobStore& store, const api::JobDefaults& defaults,
                         const PushedHook& on_pushed, Request& req) {
  const auto started = std::chrono::steady_clock::now();
  if (req.body.empty()) {
    co_return respond_error(req, api::ErrorCode::bad_request,
                            "the body is empty: send one job (a map) or an array of jobs");
  }
  auto type = api::parse_content_type(req.content_type);
  if (!type) {
    co_return respond_error(req, api::ErrorCode::unsupported_media_type,
                            "Content-Type \"" + req.content_type +
                                "\" is not supported: send application/msgpack or "
                                "application/json");
  }
  auto decoded = api::decode_push(req.body, *type, defaults);
  if (!decoded) co_return respond_error(req, decoded.error());
  const bool batch = decoded->batch;
  Pushed pushed;
  std::vector<std::size_t> name_of;  // per job, its entry in pushed.names
  name_of.reserve(decoded->jobs.size());
  for (const auto& job : decoded->jobs) {
    auto same = std::find_if(pushed.names.begin(), pushed.names.end(),
                             [&job](const auto& seen) { return seen.first == job.name; });
    if (same == pushed.names.end()) {
      pushed.names.emplace_back(job.name, 1);
      same = pushed.names.end() - 1;
    } else {
      ++same->second;
    }
    name_of.push_back(static_cast<std::size_t>(same - pushed.names.begin()));
  }
  // An unusable traceparent is dropped, not refused: tracing must never cost a pusher its jobs.
  std::string traceparent =
      api::is_valid_traceparent(req.traceparent) ? req.traceparent : std::string();
  auto stored = co_await store.push(std::move(decoded->jobs), std::move(traceparent));
  if (!stored) co_return respond_error(req, to_api_error(stored.error()));
  for (std::size_t d : stored->duplicates) --pushed.names[name_of[d]].second;
  pushed.elapsed = std::chrono::steady_clock::now() - started;
  on_pushed(pushed);
  // Contract, "Unique jobs": 200 when nothing new was stored, and the duplicates named;
  // "Merging duplicates": those merged into the job holding the claim also as merged.
  const bool all_duplicates = stored->duplicates.size() == stored->ids.size();
  const int status = all_duplicates ? 200 : 201;
  if (!batch) {
    const api::MediaType type = response_type(req);
    co_return respond_encoded(type, status,
                              api::encode_push_answer(stored->ids.front(), all_duplicates,
                                                      !stored->merged.empty(), type));
  }
  nlohmann::json body = {{"ids", std::move(stored->ids)}};
  if (!stored->duplicates.empty()) body["duplicates"] = std::move(stored->duplicates);
  if (!stored->merged.empty()) body["merged"] = std::move(stored->merged);
  co_return respond(req, status, std::move(body));
}

awaitable<Response> get(store::JobStore& store, Request& req) {
  const std::string_view id_text = req.param("id");
  auto id = store::parse_job_id(id_text, store.shards());
  if (!id) co_return not_found(req, id_text);
  auto record = co_await store.get(*id);
  if (!record) co_return respond_error(req, to_api_error(record.error()));
  co_return respond(req, 200, job_view(id->str(), *record));
}

awaitable<Response> cancel(store::JobStore& store, Request& req) {
  const std::string_view id_text = req.param("id");
  auto id = store::parse_job_id(id_text, store.shards());
  if (!id) co_return not_found(req, id_text);
  auto done = co_await store.cancel(*id);
  if (!done) co_return respond_error(req, to_api_error(done.error()));
  co_return respond_no_content();
}

// The `wait` query parameter in milliseconds (0 when absent), or the error to answer.
Expected<std::chrono::milliseconds, api::ApiError> parse_wait(const Request& req) {
  auto wait = api::query_number(req.query, {.name = "wait",
                                            .min = 0,
                                            .max = kMaxWaitSeconds,
                                            .fallback = 0,
                                            .integer = false,
                                            .unit = "seconds"});
  if (!wait) return unexpected(std::move(wait.error()));
  return std::chrono::milliseconds(static_cast<std::int64_t>(*wait * 1000));
}

awaitable<Response> result(store::JobStore& store, events::ResultWaiters& waiters,
                           const std::atomic<bool>& stopping, Request& req) {
  auto wait = parse_wait(req);
  if (!wait) co_return respond_error(req, wait.error());
  const std::string_view id_text = req.param("id");
  auto id = store::parse_job_id(id_text, store.shards());
  if (!id) co_return respond(req, 200, nullptr);
  // Watch first, then look (and tell the store that someone waits, so that the result is
  // announced when stored): a result stored in between still wakes us. A job whose attempt runs
  // on this master needs no look: its end claims or wakes the ticket (ResultWaiters::watch).
  std::shared_ptr<events::ResultWaiters::Ticket> ticket;
  if (wait->count() > 0) ticket = waiters.watch(id->str(), co_await asio::this_coro::executor);
  // A poll whose client left must not take the result (fetching it deletes it, a result handed
  // over is stored nowhere): the client's next try gets it. Its close ends the wait at once.
  // `waiting` follows the ticket the poll waits on (a wake-up makes a new one).
  std::shared_ptr<std::shared_ptr<events::ResultWaiters::Ticket>> waiting;
  if (ticket && req.client) {
    waiting = std::make_shared<std::shared_ptr<events::ResultWaiters::Ticket>>(ticket);
    req.client->watch([waiting] {
      if (*waiting) (*waiting)->timer.cancel();
    });
  }
  const auto client_left = [&req] { return req.client && req.client->left(); };
  Expected<store::ResultFetch, store::StoreError> fetched = store::ResultFetch{};
  bool looked = false;   // `fetched` is an answer of the store (or the result handed over)
  bool counted = false;  // a look of this poll counted it in the job's watch key
  if (!ticket || !ticket->here) {
    const std::chrono::milliseconds watch =
        ticket ? *wait + kWatchMargin : std::chrono::milliseconds(0);
    fetched = co_await store.fetch_result(*id, watch);
    looked = true;
    counted = ticket && fetched && fetched->kind == store::ResultFetch::Kind::pending &&
              fetched->keep_result;
    if (counted) ticket->counted = true;
  }
  // A job that keeps no result announces nothing when it ends on another master: its poll looks
  // at it again now and then, until it has ended (200 nil) or the wait is over (202).
  bool looking = ticket && looked && fetched &&
                 fetched->kind == store::ResultFetch::Kind::pending && !fetched->keep_result;
  std::chrono::milliseconds look_every = kLookFirst;
  // A result this master's dispatcher hands over (ResultWaiters::claim) is not stored: the
  // ticket is the only way to it.
  auto handed = [&fetched, &looked](const std::shared_ptr<events::ResultWaiters::Ticket>& t) {
    if (!t->result) return false;
    fetched = store::ResultFetch{.kind = store::ResultFetch::Kind::result,
                                 .result = std::move(*t->result)};
    looked = true;
    return true;
  };
  if (counted || looking || (ticket && ticket->here)) {
    // A wake-up without the result (ResultWaiters::notify_all after the events connection came
    // back, the "r" event of a result stored, or the end of an attempt here that stored none)
    // looks again for the time left.
    const auto deadline = std::chrono::steady_clock::now() + *wait;
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 || client_left() || stopping) break;
      const auto slice = looking ? std::min(left, look_every) : left;
      const bool woken = co_await waiters.wait(ticket, slice);
      // A job that keeps no result, not ended by the end of the slice: looked at again below
      // (its ticket is out of the waiters, and is made anew there before anything can break).
      const bool look_again = !woken && slice < left && !client_left() && !stopping;
      if (look_again) look_every = std::min(look_every * 2, kLookAtMost);
      if (!look_again && (!woken || handed(ticket))) {
        ticket.reset();  // out of the waiters already
        // Waited out: the answer says what the job is now (started, cancelled, finished while
        // its "r" event was lost), not what the look before the wait found.
        if (!woken) looked = false;
        break;
      }
      if (client_left()) break;
      if (stopping) {  // woken by the shutdown: one look at the store below, then the answer
        ticket.reset();
        looked = false;
        break;
      }
      // Read even when the job runs here again: an "r" event may be what woke us.
      ticket = waiters.watch(id->str(), co_await asio::this_coro::executor);
      if (waiting) *waiting = ticket;
      ticket->counted = counted;
      fetched = co_await store.fetch_result(
          *id, counted ? std::chrono::milliseconds(0) : left + kWatchMargin);
      looked = true;
      if (!fetched || fetched->kind != store::ResultFetch::Kind::pending) break;
      looking = !fetched->keep_result;
      if (looking) continue;
      counted = true;
      ticket->counted = true;
    }
  }
  // Claimed while the store was being asked (the job finished in between): the result, if
  // any, comes through the ticket within a round trip.
  if (ticket && !waiters.forget(ticket)) {
    co_await waiters.wait(ticket, std::chrono::milliseconds(0));
    handed(ticket);
  }
  if (waiting) *waiting = nullptr;
  // Nobody reads the answer (or a client that half-closed its side, as nginx takes for an
  // abort too): nothing more is taken for it, and it says so.
  if (client_left() && !(looked && fetched && fetched->kind == store::ResultFetch::Kind::result)) {
    co_return respond_error(req, api::ErrorCode::unavailable,
                            "the client closed its side of the connection while waiting; the "
                            "result is kept for the next fetch");
  }
  // Waited for an attempt here that neither handed a result nor ended in time: what is it now?
  if (!looked) fetched = co_await store.fetch_result(*id);
  if (!fetched) co_return respond_error(req, to_api_error(fetched.error()));
  switch (fetched->kind) {
    case store::ResultFetch::Kind::result:
      co_return respond(req, 200, api::raw_msgpack(std::move(fetched->result)));
    case store::ResultFetch::Kind::pending:
      co_return respond(req, 202,
                        {{"id", id->str()},
                         {"state", store::to_string(fetched->state)},
                         {"attempts", fetched->attempts}});
    case store::ResultFetch::Kind::none:
      break;
  }
  co_return respond(req, 200, nullptr);
}

}  // namespace

void add_job_routes(Router& router, store::JobStore& store, api::JobDefaults defaults,
                    events::ResultWaiters& waiters, PushedHook on_pushed,
                    const std::atomic<bool>& stopping) {
  const Roles pushers = {Role::push};
  router.add(Method::post, "/v1/jobs", pushers, [&store, defaults, on_pushed](Request& req) {
    return push(store, defaults, on_pushed, req);
  });
  router.add(Method::get, "/v1/jobs/{id}", pushers,
             [&store](Request& req) { return get(store, req); });
  router.add(Method::del, "/v1/jobs/{id}", pushers,
             [&store](Request& req) { return cancel(store, req); });
  // Fetching a kept result takes it: a HEAD would lose it without anyone reading it.
  router.add(
      Method::get, "/v1/jobs/{id}/result", pushers,
      [&store, &waiters, &stopping](Request& req) { return result(store, waiters, stopping, req); },
      Head::refused);
}

}  // namespace jq::http
