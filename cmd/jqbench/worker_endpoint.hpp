// The built-in worker: a Beast server that answers every POSTed job at once. In `noop` mode the
// answer is the fixed {type: "success", finished_at, result: nil} in MessagePack, without
// decoding the job; in `decode` mode the job is decoded in full (id, attempt, argument) and the
// answer, encoded for it, echoes the argument as its result, as a real worker's would. It counts
// the answers and, when asked to, records for each job (by its X-Jq-Job-Id header) the moment
// its request was read and the moment the answer was written to the socket. It can also hold
// jobs: the next N requests wait unanswered until released (a job that keeps its slot busy).
// Beast stays in the .cpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "cmd/jqbench/options.hpp"

namespace jq::bench {

struct JobVisit {
  std::string id;
  std::chrono::steady_clock::time_point received;  // the request was read in full
  std::chrono::steady_clock::time_point answered;  // the answer was written to the socket
};

// Connections may outlive a scenario (the master keeps them pooled), so destroy the endpoint
// only once the io_context has stopped.
class WorkerEndpoint {
 public:
  // Binds at once; port 0 picks a free one. Throws when it cannot listen.
  WorkerEndpoint(boost::asio::io_context& io, const std::string& host, std::uint16_t port,
                 WorkerMode mode);
  ~WorkerEndpoint();
  WorkerEndpoint(const WorkerEndpoint&) = delete;
  WorkerEndpoint& operator=(const WorkerEndpoint&) = delete;

  std::string url() const;  // http://HOST:PORT/
  void start();             // accepts connections from now on (once; later calls do nothing)

  void record_visits(bool on);
  std::vector<JobVisit> take_visits();

  // The next `n` job requests are read but not answered until release_held().
  void hold_next(int n);
  void release_held();
  std::int64_t holding() const;  // requests waiting unanswered now

  std::int64_t answered() const;
  std::int64_t malformed() const;  // decode mode: requests answered 400 as no job
  std::chrono::steady_clock::time_point last_answer() const;  // the latest answer written

  struct Tally;  // what the connections count, shared with them

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace jq::bench
