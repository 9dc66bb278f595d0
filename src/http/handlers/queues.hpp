// /v1/queues (counts, lag, pause and resume), GET /v1/jobs (browse jobs by state), /v1/dead
// (list, retry, delete) and /v1/stats.
#pragma once

#include <functional>

#include "src/http/router.hpp"
#include "src/store/queue_store.hpp"

namespace jq::http {

// `on_paused_changed` runs after a pause or resume, so this master's scheduler reloads the
// paused set at once instead of waiting for the event to come back through Redis.
void add_queue_routes(Router& router, store::QueueStore& queues,
                      std::function<void()> on_paused_changed);

}  // namespace jq::http
