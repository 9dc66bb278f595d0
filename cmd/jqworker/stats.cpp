#include "cmd/jqworker/stats.hpp"

#include <algorithm>

namespace jq::worker {

Stats::InFlight::InFlight(Stats& stats, std::map<std::string, std::string> headers)
    : stats_(stats) {
  std::lock_guard lock(stats_.mutex_);
  ++stats_.received_;
  stats_.max_in_flight_ = std::max(stats_.max_in_flight_, ++stats_.in_flight_);
  stats_.headers_seen_ = std::move(headers);
}

Stats::InFlight::~InFlight() {
  std::lock_guard lock(stats_.mutex_);
  --stats_.in_flight_;
}

void Stats::record_attempt(const std::string& job_id, std::int64_t attempt) {
  std::lock_guard lock(mutex_);
  by_job_[job_id].push_back(attempt);
  order_.push_back(job_id);
}

void Stats::record_connection() {
  std::lock_guard lock(mutex_);
  ++connections_;
}

nlohmann::json Stats::to_json() const {
  std::lock_guard lock(mutex_);
  return {
      {"received", received_},        {"in_flight", in_flight_}, {"max_in_flight", max_in_flight_},
      {"connections", connections_},  {"by_job", by_job_},       {"order", order_},
      {"headers_seen", headers_seen_}};
}

void Stats::reset() {
  std::lock_guard lock(mutex_);
  received_ = 0;
  connections_ = 0;
  max_in_flight_ = in_flight_;
  by_job_.clear();
  order_.clear();
  headers_seen_.clear();
}

}  // namespace jq::worker
