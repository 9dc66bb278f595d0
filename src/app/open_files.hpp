// The process's open files limit against the connections the master may hold: each client
// connection, worker connection and Redis connection is a file descriptor, and past the limit
// accept() fails (the listener then pauses, src/http/server.cpp) and so do new connections out.
#pragma once

#include <cstddef>

namespace jq::app {

// Raises the soft open files limit to the hard one (as Go's runtime and nginx's
// worker_rlimit_nofile do: a soft limit of 1024 is a shell's default, not a choice), then warns
// when `max_connections` clients with room for the master's own connections would not fit.
void fit_open_files(std::size_t max_connections);

}  // namespace jq::app
