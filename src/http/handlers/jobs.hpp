// /v1/jobs: push (one or a batch), read, cancel, and fetch a kept result.
#pragma once

#include "api/job.hpp"
#include "src/http/router.hpp"
#include "src/store/job_store.hpp"

namespace jq::http {

void add_job_routes(Router& router, store::JobStore& store, api::JobDefaults defaults);

}  // namespace jq::http
