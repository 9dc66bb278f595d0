// /v1/jobs: push (one or a batch), read, cancel, and fetch a kept result.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "api/job.hpp"
#include "src/events/result_waiters.hpp"
#include "src/http/router.hpp"
#include "src/store/job_store.hpp"

namespace jq::http {

// What one accepted push stored, for the push metrics (jobs per name, request duration). The
// scheduler does not use it: it hears of new jobs from the push script's announcement.
struct Pushed {
  std::vector<std::pair<std::string, std::size_t>> names;  // each job name once, with its jobs
  std::chrono::steady_clock::duration elapsed{};           // from the request to its 201
};
using PushedHook = std::function<void(const Pushed& pushed)>;

// `stopping`: the daemon shuts down; a long poll then looks once more and answers (its waiters
// are woken, ResultWaiters::notify_all) instead of holding the shutdown for its whole wait.
void add_job_routes(Router& router, store::JobStore& store, api::JobDefaults defaults,
                    events::ResultWaiters& waiters, PushedHook on_pushed,
                    const std::atomic<bool>& stopping);

}  // namespace jq::http
