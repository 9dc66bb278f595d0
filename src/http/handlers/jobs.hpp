// /v1/jobs: push (one or a batch), read, cancel, and fetch a kept result.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "api/job.hpp"
#include "src/events/result_waiters.hpp"
#include "src/http/router.hpp"
#include "src/store/job_store.hpp"

namespace jq::http {

// Called with the names of jobs just pushed, so this master's scheduler looks at once.
using PushedHook = std::function<void(const std::vector<std::string>& names)>;

void add_job_routes(Router& router, store::JobStore& store, api::JobDefaults defaults,
                    events::ResultWaiters& waiters, PushedHook on_pushed);

}  // namespace jq::http
