#include "src/store/script_libraries.hpp"

#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "src/redis/script_sources.hpp"

namespace jq::store {
namespace {

// FUNCTION DELETE of a library the node does not have (deleted by another master's sweep, or a
// node that never had it): as good as deleted.
bool deleted(const redis::Reply& reply) {
  return !reply.is_error() || reply.str.find("Library not found") != std::string::npos;
}

}  // namespace

ScriptLibraries::ScriptLibraries(redis::Client& redis, const redis::Keys& keys)
    : redis_(redis), keys_(keys) {}

asio::awaitable<int> ScriptLibraries::sweep(std::int64_t cutoff_ms) {
  // (g++ 12 miscompiles a braced list of strings built inside a co_await's arguments.)
  std::vector<std::string> range{"ZRANGEBYSCORE", keys_.libraries(), "-inf",
                                 "(" + std::to_string(cutoff_ms)};
  auto lapsed = co_await redis_.command(std::move(range));
  if (!lapsed || !lapsed->is_array()) co_return 0;
  std::vector<std::string> names;
  for (const redis::Reply& name : lapsed->elements) {
    if (name.is_string() && name.str != redis::library_name()) names.push_back(name.str);
  }
  if (names.empty()) co_return 0;

  std::vector<std::vector<std::string>> commands;
  for (const std::string& name : names) {
    std::vector<std::string> command{"FUNCTION", "DELETE", name};
    commands.push_back(std::move(command));
  }
  const auto nodes = co_await redis_.on_every_master(std::move(commands));
  std::vector<bool> everywhere(names.size(), true);
  for (const auto& node : nodes) {
    for (std::size_t i = 0; i < names.size(); ++i) {
      const redis::Reply* reply =
          node.replies && i < node.replies->elements.size() ? &node.replies->elements[i] : nullptr;
      if (reply && deleted(*reply)) continue;
      everywhere[i] = false;
      const std::string why = reply          ? reply->str
                              : node.replies ? std::string("no answer")
                                             : node.replies.error().message();
      spdlog::warn(
          "could not delete the script library {} of an earlier jqmaster build at {} ({}); it "
          "stays in Redis (about 200 KB) until deleted: give jqmaster's Redis user FUNCTION "
          "DELETE, or run FUNCTION DELETE {} once no master of that build runs",
          names[i], node.node, why, names[i]);
    }
  }
  std::vector<std::string> forget{"ZREM", keys_.libraries()};
  int count = 0;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (!everywhere[i]) continue;
    forget.push_back(names[i]);
    ++count;
    spdlog::info("deleted the script library {} of a jqmaster build no master has run for a while",
                 names[i]);
  }
  if (count > 0) co_await redis_.command(std::move(forget));
  co_return count;
}

}  // namespace jq::store
