#include "tests/support/tcp_forwarder.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <deque>
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

// What becomes of the answer to one request passed on, or refused, in the order they came.
struct Pending {
  enum class Kind { pass, replace, refused } kind = Kind::pass;
  std::string answer;  // for replace and refused
};

// One forwarded connection. Requests and answers are framed as RESP values, so that a marker
// stands in for the answer to its own request even when the client pipelines (a read holds
// several requests, or the server's read several answers). Loopback, small messages: a
// blocking write does not stall the loop for long.
struct Pair {
  int client = -1;
  int server = -1;
  std::string from_client;  // bytes of a request not whole yet
  std::string from_server;  // bytes of an answer not whole yet
  std::deque<Pending> pending;
  bool watched = false;
  bool silent = false;
};

// The length of the RESP value at the front of `bytes`, if it is whole there.
std::optional<std::size_t> resp_length(std::string_view bytes, std::size_t at = 0) {
  const std::size_t line_end = bytes.find("\r\n", at);
  if (at >= bytes.size() || line_end == std::string_view::npos) return std::nullopt;
  const char type = bytes[at];
  const std::string_view line = bytes.substr(at + 1, line_end - at - 1);
  const std::size_t after_line = line_end + 2;
  long long n = 0;
  switch (type) {
    case '$':
    case '!':
    case '=':  // bulk: a length, then as many bytes and CRLF (-1: null)
      n = std::stoll(std::string(line));
      if (n < 0) return after_line - at;
      if (bytes.size() < after_line + static_cast<std::size_t>(n) + 2) return std::nullopt;
      return after_line + static_cast<std::size_t>(n) + 2 - at;
    case '*':
    case '~':
    case '>':
    case '%':
    case '|': {  // aggregates: so many values (maps and attributes: twice so many)
      n = std::stoll(std::string(line));
      if (type == '%' || type == '|') n *= 2;
      std::size_t end = after_line;
      for (long long i = 0; i < n; ++i) {
        const auto length = resp_length(bytes, end);
        if (!length) return std::nullopt;
        end += *length;
      }
      return end - at;
    }
    default:  // a line: + - : _ , # ( (and an inline command)
      return after_line - at;
  }
}

// Takes the whole values off the front of `buffer`.
std::vector<std::string> take_values(std::string& buffer) {
  std::vector<std::string> values;
  std::size_t used = 0;
  while (const auto length = resp_length(buffer, used)) {
    values.push_back(buffer.substr(used, *length));
    used += *length;
  }
  buffer.erase(0, used);
  return values;
}

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// The refusals at the front of what is pending: every request before them is answered, so
// theirs go to the client now.
std::string take_refusals(Pair& p) {
  std::string answers;
  while (!p.pending.empty() && p.pending.front().kind == Pending::Kind::refused) {
    answers += p.pending.front().answer;
    p.pending.pop_front();
  }
  return answers;
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

void TcpForwarder::silence_after(std::string marker) {
  std::lock_guard lock(mutex_);
  silence_marker_ = std::move(marker);
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
        Pair& p = pairs.emplace_back();
        p.client = client;
        p.server = server;
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
        if (n <= 0) {
          close_pair(p);
          continue;
        }
        p.from_client.append(read);
        std::string passed;
        for (std::string& request : take_values(p.from_client)) {
          if (p.silent) break;  // silenced by a request before it in this read
          if (!silence_marker_.empty() && request.find(silence_marker_) != std::string::npos) {
            silence_marker_.clear();
            p.silent = true;
            silenced_.fetch_add(1);
            passed += request;
            continue;
          }
          if (refusals_left_ > 0 && request.find(refused_marker_) != std::string::npos) {
            --refusals_left_;
            refused_.fetch_add(1);
            p.pending.push_back({Pending::Kind::refused, refusal_});
            continue;
          }
          if (!marker_.empty() && request.find(marker_) != std::string::npos) {
            marker_.clear();
            p.pending.push_back({Pending::Kind::replace, std::move(replacement_)});
          } else {
            p.pending.push_back({});
          }
          passed += request;
        }
        const std::string refusals = take_refusals(p);
        if (!write_all(p.server, passed.data(), passed.size()) ||
            !write_all(p.client, refusals.data(), refusals.size())) {
          close_pair(p);
          continue;
        }
      }
      if (from_server & (POLLIN | POLLHUP | POLLERR)) {
        const ssize_t n = ::recv(p.server, buffer.data(), buffer.size(), 0);
        if (p.silent) {
          if (n <= 0) close_pair(p);
          continue;
        }
        if (n <= 0) {
          close_pair(p);
          continue;
        }
        p.from_server.append(buffer.data(), static_cast<std::size_t>(n));
        std::string answers;
        for (std::string& answer : take_values(p.from_server)) {
          // Answers to no request of its own (messages of a subscription) pass as they are.
          if (!p.pending.empty() && p.pending.front().kind == Pending::Kind::replace) {
            replaced_.fetch_add(1);  // before the client can read it: a test checks it then
            answers += p.pending.front().answer;
          } else {
            answers += answer;
          }
          if (!p.pending.empty()) p.pending.pop_front();
          answers += take_refusals(p);  // of the requests that came next, in their place
        }
        if (!write_all(p.client, answers.data(), answers.size())) close_pair(p);
      }
    }
    std::erase_if(pairs, [](const Pair& p) { return p.client < 0; });
  }
  for (Pair& p : pairs) close_pair(p);
}

}  // namespace jq::test
