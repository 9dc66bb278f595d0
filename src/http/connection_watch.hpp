// The client of a request being handled (Request::client), as the HTTP server sees it: nothing
// is allocated or armed until a handler asks to watch it, which a long poll does. Then a wait
// for the socket to become readable (also when it already is: a close that came before; Asio
// re-arms the descriptor for a wait), and a peek when it does. Bytes there (a TLS client's
// close_notify before its FIN, a request pipelined behind) end what readiness can say: the
// peer's close is then looked for every 200 ms.
#pragma once

#include <functional>
#include <memory>

#include <boost/asio/ip/tcp.hpp>

#include "src/http/message.hpp"

namespace jq::http {

class ConnectionWatch final : public ClientWatch {
 public:
  explicit ConnectionWatch(boost::asio::ip::tcp::socket& socket) : socket_(socket) {}
  ConnectionWatch(const ConnectionWatch&) = delete;
  ConnectionWatch& operator=(const ConnectionWatch&) = delete;
  ~ConnectionWatch();

  void watch(std::function<void()> on_left) override;
  bool left() const override;

  // The handler returned: the socket may be written, closed or reused from now on, and the
  // wait (its only operation) ends.
  void end();

 private:
  struct State;  // shared with the wait's handlers, which may run after end()
  boost::asio::ip::tcp::socket& socket_;
  std::shared_ptr<State> state_;
};

}  // namespace jq::http
