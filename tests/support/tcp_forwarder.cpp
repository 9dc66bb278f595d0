#include "tests/support/tcp_forwarder.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <optional>
#include <stdexcept>
#include <vector>

namespace jq::test {

namespace {

sockaddr_in loopback(std::uint16_t port) {
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  at.sin_port = htons(port);
  return at;
}

// One forwarded connection: bytes read on one side are written whole to the other (loopback,
// small messages: a blocking write does not stall the loop for long).
struct Pair {
  int client = -1;
  int server = -1;
  std::optional<std::string> replacement;  // for the server's next bytes
  bool watched = false;
  bool silent = false;
};

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

TcpForwarder::TcpForwarder(std::uint16_t upstream_port) : upstream_port_(upstream_port) {
  listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in at = loopback(0);
  socklen_t size = sizeof at;
  if (::bind(listener_, reinterpret_cast<sockaddr*>(&at), size) != 0 ||
      ::listen(listener_, 16) != 0 ||
      ::getsockname(listener_, reinterpret_cast<sockaddr*>(&at), &size) != 0 ||
      ::pipe(wake_) != 0) {
    throw std::runtime_error("TcpForwarder: cannot listen");
  }
  port_ = ntohs(at.sin_port);
  thread_ = std::thread([this] { run(); });
}

TcpForwarder::~TcpForwarder() {
  const char stop = 0;
  [[maybe_unused]] const auto written = ::write(wake_[1], &stop, 1);
  thread_.join();
  ::close(listener_);
  ::close(wake_[0]);
  ::close(wake_[1]);
}

void TcpForwarder::replace_answer(std::string marker, std::string replacement) {
  std::lock_guard lock(mutex_);
  marker_ = std::move(marker);
  replacement_ = std::move(replacement);
}

void TcpForwarder::refuse(std::string marker, std::string answer, int times) {
  std::lock_guard lock(mutex_);
  refused_marker_ = std::move(marker);
  refusal_ = std::move(answer);
  refusals_left_ = times;
}

void TcpForwarder::watch(std::string marker) {
  std::lock_guard lock(mutex_);
  watched_marker_ = std::move(marker);
}

void TcpForwarder::silence_watched() {
  std::lock_guard lock(mutex_);
  silence_ = true;
}

void TcpForwarder::run() {
  std::vector<Pair> pairs;
  std::vector<char> buffer(64 * 1024);
  const auto close_pair = [](Pair& p) {
    ::close(p.client);
    ::close(p.server);
    p.client = p.server = -1;
  };
  for (;;) {
    std::vector<pollfd> fds{{wake_[0], POLLIN, 0}, {listener_, POLLIN, 0}};
    for (const Pair& p : pairs) {
      fds.push_back({p.client, POLLIN, 0});
      fds.push_back({p.server, POLLIN, 0});
    }
    ::poll(fds.data(), fds.size(), 20);
    if (fds[0].revents != 0) break;
    if (fds[1].revents & POLLIN) {
      const int client = ::accept(listener_, nullptr, nullptr);
      const int server = ::socket(AF_INET, SOCK_STREAM, 0);
      const sockaddr_in to = loopback(upstream_port_);
      if (::connect(server, reinterpret_cast<const sockaddr*>(&to), sizeof to) == 0) {
        pairs.push_back(Pair{client, server, std::nullopt, false, false});
      } else {
        ::close(client);
        ::close(server);
      }
    }
    {
      std::lock_guard lock(mutex_);
      for (Pair& p : pairs) p.silent = p.silent || (silence_ && p.watched);
    }
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      Pair& p = pairs[i];
      const short from_client = fds[2 + 2 * i].revents;
      const short from_server = fds[3 + 2 * i].revents;
      if (from_client & (POLLIN | POLLHUP | POLLERR)) {
        const ssize_t n = ::recv(p.client, buffer.data(), buffer.size(), 0);
        const std::string_view read(buffer.data(), n > 0 ? static_cast<std::size_t>(n) : 0);
        std::lock_guard lock(mutex_);
        if (p.silent) {  // what it sends is dropped; once it gives up, both sides go
          if (n <= 0) close_pair(p);
          continue;
        }
        if (!p.watched && !watched_marker_.empty() &&
            read.find(watched_marker_) != std::string_view::npos) {
          p.watched = true;
          watched_.fetch_add(1);
        }
        if (n > 0 && refusals_left_ > 0 && read.find(refused_marker_) != std::string_view::npos) {
          --refusals_left_;
          refused_.fetch_add(1);
          if (!write_all(p.client, refusal_.data(), refusal_.size())) close_pair(p);
          continue;
        }
        if (n <= 0 || !write_all(p.server, read.data(), read.size())) {
          close_pair(p);
          continue;
        }
        if (!marker_.empty() && read.find(marker_) != std::string_view::npos) {
          marker_.clear();
          p.replacement = std::move(replacement_);
        }
      }
      if (from_server & (POLLIN | POLLHUP | POLLERR)) {
        const ssize_t n = ::recv(p.server, buffer.data(), buffer.size(), 0);
        if (p.silent) {
          if (n <= 0) close_pair(p);
          continue;
        }
        bool sent = n > 0;
        if (sent && p.replacement) {
          replaced_.fetch_add(1);  // before the client can read it: a test checks it then
          sent = write_all(p.client, p.replacement->data(), p.replacement->size());
          p.replacement.reset();
        } else if (sent) {
          sent = write_all(p.client, buffer.data(), static_cast<std::size_t>(n));
        }
        if (!sent) close_pair(p);
      }
    }
    std::erase_if(pairs, [](const Pair& p) { return p.client < 0; });
  }
  for (Pair& p : pairs) close_pair(p);
}

}  // namespace jq::test
