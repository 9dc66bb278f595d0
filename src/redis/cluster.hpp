// Redis Cluster routing for redis::Client: which master serves a slot (from CLUSTER SLOTS), one
// redis::Node (one pipelined connection, scripts loaded at every connect) per node, and a
// batch of commands split per node, sent to all of them at once, and its answers put back in
// the batch's order.
//
// What it does when the cluster moves (Redis 7.0; DESIGN.md "Scale-out"):
// - MOVED: the slot is taken to be the named node's at once, one refresh of the whole map is
//   asked for (one in flight at a time, at most one per refresh_every), and the command is sent
//   again there.
// - ASK (a slot being migrated): ASKING and the command, once, on the named node.
// - TRYAGAIN (a script's keys are split by a migration), CLUSTERDOWN, LOADING, READONLY (the
//   node became a replica), MASTERDOWN, a node with no connection: a refresh, then the command
//   again after a backoff. These all mean the command did not run, so sending it again cannot
//   run it twice.
// - A connection that broke or timed out with the command sent: the caller gets the error, as
//   with a single Redis (the command may have run; sending it again could run it twice).
// After max_attempts the caller gets the last error (Errc::cluster_down for a redirection that
// never settled), which the stores answer as 503.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "src/redis/node.hpp"
#include "src/redis/slot_map.hpp"

namespace jq::redis {

struct ClusterOptions {
  int max_attempts = 10;  // sends of one command, redirections included
  std::chrono::milliseconds backoff_min{20};
  std::chrono::milliseconds backoff_max{500};    // 20, 40, ... 500: about 2.6 s in all
  std::chrono::milliseconds refresh_every{100};  // the most often the map is read again
};

// One command of a batch: a script call or plain arguments, and the slot it goes to (-1: any
// master).
struct ClusterOp {
  int slot = -1;
  std::variant<ScriptCall, std::vector<std::string>> what;
  // Sent on the node of the op before it, right after it, and again whenever that one is (WAIT
  // after the write it confirms); its slot is not used.
  bool with_previous = false;
};

// Where the slots are: the masters and, per slot, the index of its master (kNoNode: uncovered).
struct SlotTable {
  static constexpr std::uint16_t kNoNode = 0xffff;
  std::vector<std::shared_ptr<Node>> masters;
  std::vector<std::uint16_t> owner = std::vector<std::uint16_t>(16384, kNoNode);
  std::uint64_t version = 0;  // counts the changes since start
};

class Cluster {
 public:
  using Hook = std::function<asio::awaitable<std::error_code>()>;
  using Replies = Expected<std::vector<Reply>, std::error_code>;

  // `on_ready`: run once the first map is known (then the client is ready), and again after a
  // change of the set of masters (a failover), as a single Redis's handshake hook runs after
  // every reconnect. `load_scripts`: the script library loaded on every node
  // connection that lacks it.
  Cluster(asio::any_io_executor executor, std::vector<Address> seeds, ConnectionOptions base,
          Hook on_ready, bool load_scripts = true, ClusterOptions options = {});
  ~Cluster();
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  void start();
  void stop();
  // The first map is known, the ready hook has passed, and some master is connected.
  bool ready() const;

  // The replies of `ops`, in their order; an error when some op could not be served.
  asio::awaitable<Replies> run(std::vector<ClusterOp> ops);
  // Each op's reply or its own error: an op whose node cannot serve it (down, no replica to take
  // over) fails alone, after the same retries, and the others' replies are kept. For reads.
  asio::awaitable<std::vector<ReplyResult>> run_each(std::vector<ClusterOp> ops);
  // `commands` on every master of the current map, each answered as an array (per master, in
  // the map's order), with the master's address for messages.
  struct NodeReplies {
    std::string node;
    ReplyResult replies;
  };
  asio::awaitable<std::vector<NodeReplies>> on_every_master(
      std::vector<std::vector<std::string>> commands);

  // The current map (never null once ready); a new table replaces it whole when it changes.
  std::shared_ptr<const SlotTable> table() const { return table_.load(); }
  // Called (on the cluster's strand) after every change of the map. Set before start().
  void on_table_change(std::function<void()> hook) { on_change_ = std::move(hook); }
  // Reads the map again soon (one read in flight at a time, at most one per refresh_every).
  void refresh_soon() { want_refresh(); }
  // The connection options every node gets (its address aside).
  const ConnectionOptions& node_options() const { return base_; }

  void time_commands(metrics::Histogram* histogram) { command_duration_ = histogram; }

 private:
  struct Pending;
  struct Group;

  static std::vector<Pending> pending_of(std::vector<ClusterOp> ops);
  asio::awaitable<std::error_code> settle_all(std::vector<Pending>& pending, bool each);
  std::shared_ptr<Node> node_at(const NodeAddress& address);
  std::shared_ptr<Node> any_master(const SlotTable& table) const;
  asio::awaitable<std::vector<ReplyResult>> send_groups(std::vector<Group>& groups);
  // Sorts the replies of one node into done or retry; an error the caller must get as it is. A
  // node that lost the script library is added to `reload` (once).
  std::optional<std::error_code> settle(const Group& group, ReplyResult reply,
                                        std::vector<Pending>& ops, bool& back_off,
                                        std::error_code& last,
                                        std::vector<std::shared_ptr<Node>>& reload);
  void moved(int slot, const NodeAddress& to);
  void want_refresh();
  asio::awaitable<void> refresh_loop();
  asio::awaitable<bool> refresh();
  void install(std::shared_ptr<SlotTable> table);

  asio::any_io_executor executor_;
  asio::strand<asio::any_io_executor> strand_;
  std::vector<Address> seeds_;
  ConnectionOptions base_;
  Hook on_ready_;
  bool load_scripts_;
  ClusterOptions options_;
  metrics::Histogram* command_duration_ = nullptr;
  std::function<void()> on_change_;

  std::atomic<std::shared_ptr<const SlotTable>> table_;
  std::mutex table_mutex_;  // serializes changes of table_ (readers only load it)
  std::mutex nodes_mutex_;
  std::unordered_map<std::string, std::shared_ptr<Node>> nodes_;  // by "host:port", kept
  std::atomic<bool> ready_{false};
  std::atomic<bool> stopped_{false};
  std::atomic<bool> refresh_wanted_{false};
  std::shared_ptr<asio::steady_timer> refresh_timer_;  // wakes refresh_loop; on the strand
};

// The slot a plain command goes to by its first key; -1 for a command without keys (PING,
// INFO, SCRIPT, SCAN, WAIT, ...), which any master may answer.
int command_slot(const std::vector<std::string>& args);

}  // namespace jq::redis
