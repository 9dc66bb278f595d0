// What a socket the program is not reading from holds, seen without taking it: nothing yet, bytes,
// or the peer's close. A pooled connection to a worker is reused only when nothing is there
// (src/dispatch/worker_call.cpp); a long poll stops waiting when its client closed
// (src/http/server.cpp). One non-blocking peek, no wait.
#pragma once

#include <cerrno>

#include <sys/socket.h>

namespace jq {

enum class PeerState { quiet, sent_bytes, closed };

inline PeerState peek_peer(int fd) {
  char byte;
  const ssize_t n = ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n > 0) return PeerState::sent_bytes;
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return PeerState::quiet;
  return PeerState::closed;  // the end of the stream, or an error (a reset)
}

}  // namespace jq
