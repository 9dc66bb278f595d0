// A job as GET /v1/jobs/{id} shows it, and as GET /v1/jobs lists it (with its argument).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "src/store/job_record.hpp"

namespace jq::http {

nlohmann::json job_view(const std::string& id, const store::JobRecord& r);

}  // namespace jq::http
