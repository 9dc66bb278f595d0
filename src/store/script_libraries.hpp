// The script libraries of other builds: each build of jqmaster loads its own (jq_<hex>), and
// Redis keeps every library it was given, saved with the data, until someone deletes it. Every
// master records its build's library with each heartbeat (beatMaster-2.lua); a library whose
// latest heartbeat lapsed long ago belongs to a build no master runs any more, and is deleted
// from every Redis master, with its record.
//
// Deleting is safe even when a master of that build still runs unseen (stopped for longer than
// the grace, or on the same Redis under another key prefix): its next call finds the library
// gone and loads it again, as after a FUNCTION FLUSH. A library no record names (loaded by a
// build older than this sweep) is never deleted.
#pragma once

#include <cstdint>

#include <boost/asio/awaitable.hpp>

#include "src/redis/client.hpp"
#include "src/redis/keys.hpp"

namespace jq::store {

namespace asio = boost::asio;

class ScriptLibraries {
 public:
  ScriptLibraries(redis::Client& redis, const redis::Keys& keys);

  // Deletes, on every Redis master, each recorded library (not this build's) whose latest
  // heartbeat expired before `cutoff_ms`, and then its record; a library some node could not
  // delete keeps its record, for the next sweep. How many libraries it deleted.
  asio::awaitable<int> sweep(std::int64_t cutoff_ms);

 private:
  redis::Client& redis_;
  const redis::Keys& keys_;
};

}  // namespace jq::store
