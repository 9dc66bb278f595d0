// GET / (the dashboard page) and GET /assets/{file} (its script, style sheet and icon). Open
// routes: the page holds no data; it reads everything through the /v1 API, with the token the
// operator types in when auth is on.
#pragma once

#include "src/http/router.hpp"

namespace jq::http {

void add_dashboard_routes(Router& router);

}  // namespace jq::http
