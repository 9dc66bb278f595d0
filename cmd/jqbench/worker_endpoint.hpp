// The built-in no-op worker: a Beast server that answers every POSTed job at once with
// {type: "success", finished_at, result: nil} in MessagePack, without decoding the job. It counts
// the answers and, when asked to, records for each job (by its X-Jq-Job-Id header) the moment
// its request was read and the moment the answer was written to the socket. Beast stays in the
// .cpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

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
  WorkerEndpoint(boost::asio::io_context& io, const std::string& host, std::uint16_t port);
  ~WorkerEndpoint();
  WorkerEndpoint(const WorkerEndpoint&) = delete;
  WorkerEndpoint& operator=(const WorkerEndpoint&) = delete;

  std::string url() const;  // http://HOST:PORT/
  void start();             // accepts connections from now on (once; later calls do nothing)

  void record_visits(bool on);
  std::vector<JobVisit> take_visits();

  std::int64_t answered() const;
  std::chrono::steady_clock::time_point last_answer() const;  // the latest answer written

  struct Tally;  // what the connections count, shared with them

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace jq::bench
