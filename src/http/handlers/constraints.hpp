// /v1/constraints: create, list, read (with the live state), replace, patch, delete. Admin only.
#pragma once

#include <functional>

#include <boost/asio/awaitable.hpp>

#include "src/http/router.hpp"
#include "src/store/constraint_set.hpp"
#include "src/store/constraint_store.hpp"

namespace jq::http {

// `on_changed` runs after a definition changed, so this master reloads its constraints at once
// (other masters hear it through Redis). `cache` is the snapshot this master's pushes match
// against: a constraint it shows (GET by name) is in it.
void add_constraint_routes(Router& router, store::ConstraintStore& constraints,
                           store::ConstraintCache& cache,
                           std::function<boost::asio::awaitable<void>()> on_changed);

}  // namespace jq::http
