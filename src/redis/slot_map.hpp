// What a Redis Cluster says about itself, read without sockets: the masters and the slots each
// serves (CLUSTER SLOTS), and the redirections its nodes answer (-MOVED, -ASK).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"
#include "src/redis/reply.hpp"

namespace jq::redis {

struct NodeAddress {
  std::string host;
  std::uint16_t port = 0;
  bool operator==(const NodeAddress&) const = default;
  std::string str() const { return host + ":" + std::to_string(port); }
};

struct SlotRange {
  int first = 0;           // inclusive
  int last = 0;            // inclusive
  std::size_t master = 0;  // index into SlotLayout::masters
};

struct SlotLayout {
  std::vector<NodeAddress> masters;  // each once, in the order CLUSTER SLOTS first names them
  std::vector<SlotRange> ranges;
};

// CLUSTER SLOTS (Redis 7.0): [[first, last, [host, port, id, ...], replica...], ...]. A master
// shown with an empty host ("" or "?": the node does not know its own address) is taken to be
// `asked_host`, the host the question went to.
Expected<SlotLayout, std::string> parse_cluster_slots(const Reply& reply,
                                                      std::string_view asked_host);

struct Redirect {
  enum class Kind { moved, ask };
  Kind kind = Kind::moved;
  int slot = 0;
  NodeAddress to;
};

// "MOVED 3999 127.0.0.1:6381" or "ASK 3999 127.0.0.1:6381" (an error reply's text); nullopt for
// any other text. A host left empty ("MOVED 3999 :6381") stays empty: the caller knows which
// host it asked.
std::optional<Redirect> parse_redirect(std::string_view error_text);

}  // namespace jq::redis
