#include "src/store/job_state.hpp"

namespace jq::store {

std::string_view to_string(JobState state) {
  switch (state) {
    case JobState::queued:
      return "queued";
    case JobState::scheduled:
      return "scheduled";
    case JobState::running:
      return "running";
    case JobState::succeeded:
      return "succeeded";
    case JobState::dead:
      return "dead";
  }
  return "unknown";
}

std::optional<JobState> job_state_from_int(std::int64_t value) {
  if (value < 1 || value > 5) return std::nullopt;
  return static_cast<JobState>(value);
}

}  // namespace jq::store
