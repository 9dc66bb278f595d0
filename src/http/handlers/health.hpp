// GET /healthz (the process serves) and GET /readyz (Redis answers, pushes can be stored, and we
// are not stopping).
#pragma once

#include <atomic>

#include "src/http/router.hpp"
#include "src/store/job_store.hpp"
#include "src/store/queue_store.hpp"

namespace jq::http {

void add_health_routes(Router& router, store::QueueStore& store, const store::JobStore& pushes,
                       const std::atomic<bool>& stopping);

}  // namespace jq::http
