#include "src/redis/slot_map.hpp"

#include <charconv>

#include "src/redis/slot.hpp"

namespace jq::redis {
namespace {

template <class Int>
bool parse_int(std::string_view text, Int& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return !text.empty() && ec == std::errc{} && end == text.data() + text.size();
}

std::optional<NodeAddress> node_of(const Reply& node, std::string_view asked_host) {
  if (!node.is_array() || node.elements.size() < 2 || !node.elements[0].is_string() ||
      !node.elements[1].is_integer()) {
    return std::nullopt;
  }
  const std::int64_t port = node.elements[1].integer;
  if (port <= 0 || port > 65535) return std::nullopt;
  std::string host = node.elements[0].str;
  if (host.empty() || host == "?") host = std::string(asked_host);
  return NodeAddress{std::move(host), static_cast<std::uint16_t>(port)};
}

std::size_t index_of(std::vector<NodeAddress>& masters, NodeAddress node) {
  for (std::size_t i = 0; i < masters.size(); ++i) {
    if (masters[i] == node) return i;
  }
  masters.push_back(std::move(node));
  return masters.size() - 1;
}

}  // namespace

Expected<SlotLayout, std::string> parse_cluster_slots(const Reply& reply,
                                                      std::string_view asked_host) {
  if (!reply.is_array()) return unexpected(std::string("CLUSTER SLOTS did not answer an array"));
  SlotLayout layout;
  for (const Reply& range : reply.elements) {
    if (!range.is_array() || range.elements.size() < 3 || !range.elements[0].is_integer() ||
        !range.elements[1].is_integer()) {
      return unexpected(std::string("CLUSTER SLOTS answered a range of an unknown shape"));
    }
    const std::int64_t first = range.elements[0].integer;
    const std::int64_t last = range.elements[1].integer;
    if (first < 0 || last < first || last >= kSlots) {
      return unexpected("CLUSTER SLOTS answered the slots " + std::to_string(first) + "-" +
                        std::to_string(last));
    }
    auto master = node_of(range.elements[2], asked_host);
    if (!master) return unexpected(std::string("CLUSTER SLOTS answered a node of unknown shape"));
    layout.ranges.push_back(SlotRange{static_cast<int>(first), static_cast<int>(last),
                                      index_of(layout.masters, std::move(*master))});
  }
  return layout;
}

std::optional<Redirect> parse_redirect(std::string_view text) {
  Redirect r;
  if (text.starts_with("MOVED ")) {
    r.kind = Redirect::Kind::moved;
    text.remove_prefix(6);
  } else if (text.starts_with("ASK ")) {
    r.kind = Redirect::Kind::ask;
    text.remove_prefix(4);
  } else {
    return std::nullopt;
  }
  const auto space = text.find(' ');
  if (space == std::string_view::npos || !parse_int(text.substr(0, space), r.slot) || r.slot < 0 ||
      r.slot >= kSlots) {
    return std::nullopt;
  }
  const std::string_view where = text.substr(space + 1);
  const auto colon = where.rfind(':');
  if (colon == std::string_view::npos || !parse_int(where.substr(colon + 1), r.to.port) ||
      r.to.port == 0) {
    return std::nullopt;
  }
  r.to.host = std::string(where.substr(0, colon));
  return r;
}

}  // namespace jq::redis
