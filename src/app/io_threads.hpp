// How many threads run the io_context (config: io_threads).
#pragma once

#include <string_view>

namespace jq::app {

// `configured` > 0 is taken as is. 0 is one thread per core, less the core a Redis on this
// machine (the embedded one, or a loopback or unix-socket URL) keeps busy: measured on 2 cores
// with Redis and a worker beside the master, a second io thread made the master use 1.5-2x the
// CPU per job and drain 20 % slower (threads wake each other for every handler they pass on).
unsigned io_thread_count(int configured, std::string_view redis_url, unsigned cores);

// Whether redis.url names a Redis on this machine (empty: the embedded one).
bool redis_is_local(std::string_view redis_url);

}  // namespace jq::app
