// /v1/workers: register (or update by URL, also as a heartbeat), list, read, delete.
#pragma once

#include <functional>

#include "src/http/router.hpp"
#include "src/workers/worker_store.hpp"

namespace jq::http {

// `on_changed` runs after a registration changed, so this master's scheduler sees it at once
// (other masters hear it through Redis).
void add_worker_routes(Router& router, workers::WorkerStore& workers,
                       std::function<void()> on_changed);

}  // namespace jq::http
