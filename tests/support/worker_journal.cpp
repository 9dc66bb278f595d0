#include "tests/support/worker_journal.hpp"

#include <sstream>
#include <stdexcept>

namespace jq::test {

void WorkerJournal::add(const std::string& text) {
  std::map<std::string, int> running;  // job id -> attempts begun and not ended, in this file
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string event, id, attempt, outcome;
    fields >> event >> id >> attempt >> outcome;
    if (event == "start" && !attempt.empty()) {
      ++starts;
      ++starts_by_job[id];
      if (running[id]++ > 0) overlapping.insert(id);
    } else if (event == "end" && !outcome.empty()) {
      --running[id];
      if (outcome == "success") ++successes_by_job[id];
    } else {
      throw std::runtime_error("not a journal line: " + line);
    }
  }
}

std::size_t WorkerJournal::duplicate_successes() const {
  std::size_t extra = 0;
  for (const auto& [id, n] : successes_by_job) extra += static_cast<std::size_t>(n - 1);
  return extra;
}

}  // namespace jq::test
