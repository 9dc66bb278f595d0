// A loopback listener whose accept queue is full: new connections' SYNs are dropped, as by a host
// that drops packets, so a connect to it neither succeeds nor fails until the client gives up.
#pragma once

#include <cstdint>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

namespace jq::test {

class FullListener {
 public:
  FullListener() {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof at;
    REQUIRE(::bind(listener_, reinterpret_cast<sockaddr*>(&at), size) == 0);
    REQUIRE(::listen(listener_, 0) == 0);  // one connection waiting fills the queue
    REQUIRE(::getsockname(listener_, reinterpret_cast<sockaddr*>(&at), &size) == 0);
    port_ = ntohs(at.sin_port);
    queued_ = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(::connect(queued_, reinterpret_cast<sockaddr*>(&at), sizeof at) == 0);
  }
  ~FullListener() {
    ::close(queued_);
    ::close(listener_);
  }
  FullListener(const FullListener&) = delete;
  FullListener& operator=(const FullListener&) = delete;

  std::uint16_t port() const { return port_; }

 private:
  int listener_ = -1;
  int queued_ = -1;
  std::uint16_t port_ = 0;
};

}  // namespace jq::test
