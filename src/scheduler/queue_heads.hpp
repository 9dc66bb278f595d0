// What this master believes about the head of every queue (one name in one shard), and the
// choice of the queue to reserve from next. No Redis here: the scheduler reads heads and reserves
// jobs, and tells this class what it sent and what came back.
//
// A head is known once Redis answered it (a head read or a reservation, which answers the
// queue's head after it), and stays known while announcements arrive: every script that makes a
// job ready announces it, so a known head can only get better that way. Another master's
// reservations can make a kept head stale, never too late: a reservation that finds less than
// expected corrects it. The scheduler's tick reads known heads again and announces what it
// finds (a net for announcements that never came): that only ever adds a head, so a stale one
// stays until the queue's next reservation corrects it. forget_all() makes every head unknown
// again (one being reserved from once its last answer is in), as after Redis was away.
//
// While reads or reservations of a queue are on their way ("busy"), announcements are also kept
// aside: an answer may predate them, so they are merged into it. A queue forgotten meanwhile
// stays unknown after the last answer. A known queue being reserved from may be chosen again:
// its head as last known runs no later than its real one (a reservation only takes from the
// front), so another reservation bounded by the next-best head takes nothing out of order, and
// as a bound it only stops a reservation early. But only while it may hold more jobs than the
// reservations on their way ask for: as many as Redis counted waiting in it after its last
// reservation, else the head, and the jobs announced since. Else the others wait for
// an answer: with a hundred endpoints serving one name, each with a free slot, a job announced was
// chosen by all of them, and a hundred reservations went for it (docs/BENCHMARKS.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "src/store/dispatch_store.hpp"

namespace jq::scheduler {

// Where to reserve from, and how far.
struct Choice {
  store::QueueHead head;  // the best known head among the candidates: it runs first
  // Reserve only jobs that run before this one (the next-best head elsewhere); none: no bound.
  std::optional<store::QueueHead> bound;
  // The next-best head ties with `head` exactly (retries of two shards due at the same moment):
  // a bound equal to the head would exclude it, so take the head alone.
  bool head_only = false;
  // Jobs its queue holds, as known, beyond what the reservations on their way ask for.
  std::int64_t spare = 0;
};

// What a reservation's answer says besides the head: how many jobs it asked for (its begin's
// take), and how many Redis counted waiting in the queue after it.
struct Reserved {
  int asked = 0;
  std::int64_t left = 0;
};

class QueueHeads {
 public:
  // Told each time known_empty(name) changes, with its new answer (the scheduler keeps which
  // names may have work from it: NamesWithWork). It must not change this QueueHeads.
  using EmptyChanged = std::function<void(const std::string& name, bool known_empty)>;

  explicit QueueHeads(int shards, EmptyChanged on_empty = {})
      : shards_(shards), on_empty_(std::move(on_empty)) {}

  int shards() const { return shards_; }

  // A job became ready: the queue's head is it or stays what it was, whichever runs first.
  void announce(store::QueueHead head);
  void forget(std::string_view name);  // every shard of the name
  void forget_all();

  // The queues of `names` (every shard) whose head is neither known nor being read.
  std::vector<store::QueueRef> unknown(const std::vector<std::string>& names);
  // The queues of `names` in `shard` whose head is known (an empty queue's included), none being
  // read, as they were when listed: how many reads and reservations of each had begun by then.
  struct Known {
    store::QueueRef queue;
    std::uint64_t begun = 0;
  };
  std::vector<Known> known(const std::vector<std::string>& names, int shard);
  // What a read of a queue listed by known() answered, sent without begin(): announced, unless
  // a read or reservation of the queue has begun since (its answer, newer, is the one to keep).
  void read_again(const Known& queue, std::optional<store::QueueHead> head);
  // A read (take 0) or a reservation of up to `take` jobs of the queue is on its way (several
  // may be).
  void begin(const store::QueueRef& queue, int take = 0);
  // An answer: the head after it (nullopt: empty), and for a reservation what else it said.
  // Announcements since the first begin() still on its way are merged in.
  void settle(const store::QueueRef& queue, std::optional<store::QueueHead> fresh,
              Reserved reserved = {});
  // It failed (a reservation: `asked`, its begin's take): the queue's head is unknown until read
  // again.
  void fail(const store::QueueRef& queue, int asked = 0);

  // The best known head among the queues of `names` (those being reserved from with their head
  // as last known), bounded by the next best; nullopt when none of them is known to hold a job,
  // or when the best is being reserved from and may hold no more than those reservations take
  // (their answers tell).
  std::optional<Choice> choose(const std::vector<std::string>& names);

  // Whether a read or reservation of a queue of `names` is on its way: its answer may bring a
  // choice where choose() found none.
  bool busy(const std::vector<std::string>& names);

  // Whether every queue of `name` (every shard) is known to be empty, none being read.
  bool known_empty(std::string_view name) const;

  // For tests and diagnostics: the head this master believes in, nullopt when unknown or empty.
  std::optional<store::QueueHead> known_head(const store::QueueRef& queue);

 private:
  struct View {
    bool known = false;                         // head is Redis's, plus the announcements since
    std::optional<store::QueueHead> head;       // nullopt: empty
    int busy = 0;                               // reads and reservations on their way
    bool forgotten = false;                     // forgotten while busy: unknown after the answer
    std::optional<store::QueueHead> announced;  // while busy
    std::uint64_t begun = 0;                    // reads and reservations begun, ever
    int taking = 0;                             // jobs the reservations on their way may take
    std::int64_t ready = 0;  // jobs it holds, as last known (at least the head, once known)
  };
  // Whether another reservation may go for the queue now.
  static bool may_follow(const View& v) { return v.busy == 0 || v.ready > v.taking; }
  // One name's queues, one view per shard, and how many of them are not known to be empty:
  // known_empty() is one comparison, and a change of its answer is seen where it happens.
  struct Name {
    std::vector<View> shards;
    int not_empty = 0;
  };
  struct NameHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view name) const {
      return std::hash<std::string_view>{}(name);
    }
  };

  static bool empty_known(const View& v) { return v.known && !v.busy && !v.head; }
  using Entry = std::pair<const std::string, Name>;
  // Every change of a view goes through here, which keeps its name's not_empty and tells
  // on_empty_ when known_empty() changes.
  template <class Change>
  void change(Entry& entry, int shard, Change&& c) {
    Name& n = entry.second;
    View& v = n.shards[static_cast<std::size_t>(shard)];
    const bool was = empty_known(v);
    const bool name_was = n.not_empty == 0;
    c(v);
    n.not_empty += static_cast<int>(was) - static_cast<int>(empty_known(v));
    if (on_empty_ && name_was != (n.not_empty == 0)) on_empty_(entry.first, n.not_empty == 0);
  }
  Entry& entry_of(std::string_view name);
  Name& name_of(std::string_view name) { return entry_of(name).second; }
  void forget_shards(Entry& entry);
  static void settle_view(View& v, std::optional<store::QueueHead> fresh, Reserved reserved);
  // announce() (`announced`: a job that became ready) and read_again() (a head read again).
  void merge(store::QueueHead head, bool announced);

  int shards_;
  EmptyChanged on_empty_;
  std::unordered_map<std::string, Name, NameHash, std::equal_to<>> names_;
};

}  // namespace jq::scheduler
