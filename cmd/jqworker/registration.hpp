// Registering with a master: POST {url, names, concurrency, ttl?} as JSON to MASTER/v1/workers;
// with a ttl, again every ttl/3 as a heartbeat so the registration does not lapse, without one
// never again. Until the first POST succeeds (the master may start after the worker) it is
// retried every second.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"

namespace boost::asio {
class io_context;
}

namespace jq::worker {

// http://host[:port][/base] — the master's address; the path, if any, prefixes /v1/workers.
struct MasterUrl {
  std::string host;
  std::uint16_t port = 80;
  std::string base_path;  // without a trailing slash; empty for the root
};

// By the URL rules of registered workers (api/http_url.hpp), without a query; errors begin
// "the master URL ...".
Expected<MasterUrl, std::string> parse_master_url(std::string_view url);

struct Registration {
  MasterUrl master;
  std::string own_url;                  // the URL the master should POST jobs to
  std::vector<std::string> names{"*"};  // job names served
  int concurrency = 8;                  // jobs at once, across all masters
  int ttl_s = 0;                        // 0: register once, no ttl; else heartbeat every ttl/3
  std::string token;                    // sent as Authorization: Bearer TOKEN when set
};

// The JSON body POSTed to /v1/workers.
std::string registration_body(const Registration& r);

// Starts the register/heartbeat loop on `io`; it runs until `io` stops.
void start_registration(boost::asio::io_context& io, Registration registration);

}  // namespace jq::worker
