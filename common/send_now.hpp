// Sends on a plain TCP socket what the kernel takes at once, without waiting. A small answer or
// job (nearly all of them) goes whole in this one call, and the coroutine writing it goes on
// without suspending: Asio's asynchronous write made the same send, then queued its completion
// to the io_context and resumed the coroutine from there (an operation, a queue round and a
// resumption per message, docs/BENCHMARKS.md). What the kernel did not take is written
// asynchronously by the caller.
// Used from the socket's executor, and only when no other write is pending on the socket.
#pragma once

#include <array>
#include <cerrno>
#include <cstddef>

#include <sys/socket.h>
#include <sys/uio.h>

#include <boost/asio/buffer.hpp>
#include <boost/system/error_code.hpp>

namespace jq {

// What of `buffers` the kernel did not take (nothing, usually; all of it with `ec` set when the
// socket failed: a peer that left). None going because the socket's send buffer is full is no
// error.
template <std::size_t N>
std::array<boost::asio::const_buffer, N> send_now(int fd,
                                                  std::array<boost::asio::const_buffer, N> buffers,
                                                  boost::system::error_code& ec) {
  std::array<iovec, N> parts{};
  for (std::size_t i = 0; i < N; ++i) {
    parts[i] = iovec{const_cast<void*>(buffers[i].data()), buffers[i].size()};
  }
  msghdr message{};
  message.msg_iov = parts.data();
  message.msg_iovlen = N;
  ssize_t n = 0;
  do {
    n = ::sendmsg(fd, &message, MSG_DONTWAIT | MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      ec.assign(errno, boost::system::system_category());
    }
    return buffers;
  }
  auto sent = static_cast<std::size_t>(n);
  for (auto& b : buffers) {
    const std::size_t taken = sent < b.size() ? sent : b.size();
    b += taken;
    sent -= taken;
  }
  return buffers;
}

}  // namespace jq
