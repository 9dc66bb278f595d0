// An append-only record of the attempts jqworker runs, for tests that kill it: one line when an
// attempt begins and one when its answer is ready,
//
//   start <job id> <attempt>
//   end <job id> <attempt> success|other
//
// Each line is one write(2) on an O_APPEND descriptor, made before the job's sleep and before its
// answer goes out. So every line written before a kill -9 survives it (it is in the kernel, not
// in a buffer of this process), and the lines of one process are in the order the events
// happened: an attempt whose "start" comes before another attempt's "end" of the same job ran
// while that one still ran. A killed process's attempts without an "end" ran until it died.
#pragma once

#include <cstdint>
#include <string>

#include "common/expected.hpp"

namespace jq::worker {

class Journal {
 public:
  // Opens (creates, appends to) `path`; the error names the file and the reason.
  static Expected<Journal, std::string> open(const std::string& path);
  Journal(Journal&& other) noexcept;
  Journal& operator=(Journal&&) = delete;
  ~Journal();

  void start(const std::string& job_id, std::int64_t attempt) const;
  void end(const std::string& job_id, std::int64_t attempt, bool success) const;

 private:
  explicit Journal(int fd) : fd_(fd) {}
  void append(const std::string& line) const;

  int fd_ = -1;
};

}  // namespace jq::worker
