// /v1/workers: register (or update by URL, also as a heartbeat), list, read, delete.
#pragma once

#include "src/http/router.hpp"
#include "src/workers/worker_store.hpp"

namespace jq::http {

void add_worker_routes(Router& router, workers::WorkerStore& workers);

}  // namespace jq::http
