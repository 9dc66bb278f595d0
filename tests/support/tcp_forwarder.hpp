// A TCP forwarder on loopback between a client under test and a server, which can stand in for
// the server's answer to a request that carries a given byte string: after the server ran it
// (a proxy's "upstream timed out" while the command ran behind it), or instead of passing it on
// (a refusal, as Redis over its maxmemory answers). The connection stays up.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace jq::test {

class TcpForwarder {
 public:
  explicit TcpForwarder(std::uint16_t upstream_port);
  ~TcpForwarder();
  TcpForwarder(const TcpForwarder&) = delete;
  TcpForwarder& operator=(const TcpForwarder&) = delete;

  std::uint16_t port() const { return port_; }
  // The next request that contains `marker` is passed on, and the server's answer to it
  // becomes `replacement` (requests and answers are framed as RESP: pipelining is kept).
  void replace_answer(std::string marker, std::string replacement);
  // The next `times` requests that contain `marker` are not passed on: the client gets
  // `answer` instead, in the place of the server's answer.
  void refuse(std::string marker, std::string answer, int times);
  int refused() const { return refused_.load(); }  // requests refused so far
  // How many answers were replaced so far.
  int replaced() const { return replaced_.load(); }
  // The next request that contains `marker` is passed on (the server runs it), and from then
  // on its connection goes silent as silence_watched() makes it: the answer never comes.
  void silence_after(std::string marker);
  int silenced() const { return silenced_.load(); }  // connections silenced so far
  // Connections whose client bytes contain `marker` are counted (from now on).
  void watch(std::string marker);
  int watched() const { return watched_.load(); }
  // The connections counted so far go silent: nothing is passed on either way any more, and
  // neither side is closed (a peer gone without a word, a NAT that forgot the connection).
  void silence_watched();

 private:
  void run();

  std::uint16_t upstream_port_;
  std::uint16_t port_ = 0;
  int listener_ = -1;
  int wake_[2] = {-1, -1};
  std::mutex mutex_;
  std::string marker_;
  std::string replacement_;
  std::string refused_marker_;
  std::string refusal_;
  int refusals_left_ = 0;
  std::atomic<int> replaced_{0};
  std::atomic<int> refused_{0};
  std::string watched_marker_;
  bool silence_ = false;
  std::atomic<int> watched_{0};
  std::string silence_marker_;
  std::atomic<int> silenced_{0};
  std::thread thread_;
};

}  // namespace jq::test
