// What jqworker has seen, for tests: how many job requests, how many at once (max_in_flight is
// how a test checks that the master never exceeds a worker's registered concurrency), which
// attempts of which job, and the last request's X-Jq-* and custom headers. One mutex: this is
// a test tool, and a request takes it only twice.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace jq::worker {

class Stats {
 public:
  // A job request counted as in flight from construction (its body was read) until
  // destruction (its answer is ready to write, or its connection is about to close).
  class InFlight {
   public:
    InFlight(Stats& stats, std::map<std::string, std::string> headers);
    ~InFlight();
    InFlight(const InFlight&) = delete;
    InFlight& operator=(const InFlight&) = delete;

   private:
    Stats& stats_;
  };

  void record_attempt(const std::string& job_id, std::int64_t attempt);
  // A connection that carried a job, counted once (how a test sees that the master keeps its
  // connections alive).
  void record_connection();
  // {received, in_flight, max_in_flight, connections, by_job: {id: [attempts]}, order: [ids as
  //  they arrived], headers_seen: {name: value}}
  nlohmann::json to_json() const;
  // Forgets everything but the requests in flight now.
  void reset();

 private:
  mutable std::mutex mutex_;
  std::uint64_t received_ = 0;
  std::int64_t in_flight_ = 0;
  std::int64_t max_in_flight_ = 0;
  std::uint64_t connections_ = 0;
  std::map<std::string, std::vector<std::int64_t>> by_job_;
  std::vector<std::string>
      order_;  // job ids as their attempts arrived (tests check priority order)
  std::map<std::string, std::string> headers_seen_;  // lower-case names
};

}  // namespace jq::worker
