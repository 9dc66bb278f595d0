#include "cmd/jqworker/journal.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>
#include <utility>

#include <spdlog/spdlog.h>

namespace jq::worker {

Expected<Journal, std::string> Journal::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return unexpected("--journal " + path + ": " + std::strerror(errno));
  return Journal(fd);
}

Journal::Journal(Journal&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

void Journal::start(const std::string& job_id, std::int64_t attempt) const {
  append("start " + job_id + " " + std::to_string(attempt) + "\n");
}

void Journal::end(const std::string& job_id, std::int64_t attempt, bool success) const {
  append("end " + job_id + " " + std::to_string(attempt) + (success ? " success\n" : " other\n"));
}

// One write per line: O_APPEND makes it land whole at the end even with several io threads.
void Journal::append(const std::string& line) const {
  const ssize_t n = ::write(fd_, line.data(), line.size());
  if (n != static_cast<ssize_t>(line.size())) {
    spdlog::error("writing the journal failed: {}", n < 0 ? std::strerror(errno) : "short write");
  }
}

}  // namespace jq::worker
