#include "src/scheduler/queue_heads.hpp"

#include <algorithm>
#include <utility>

namespace jq::scheduler {
namespace {

// The one that runs first; an absent head loses.
const std::optional<store::QueueHead>& better(const std::optional<store::QueueHead>& a,
                                              const std::optional<store::QueueHead>& b) {
  if (!a) return b;
  if (!b) return a;
  return b->before(*a) ? b : a;
}

}  // namespace

QueueHeads::Entry& QueueHeads::entry_of(std::string_view name) {
  auto it = names_.find(name);
  if (it == names_.end()) {
    // Every shard unknown: none is known to be empty.
    Name fresh{std::vector<View>(static_cast<std::size_t>(shards_)), shards_};
    it = names_.emplace(std::string(name), std::move(fresh)).first;
  }
  return *it;
}

void QueueHeads::announce(store::QueueHead head) {
  merge(std::move(head), true);
}

void QueueHeads::merge(store::QueueHead head, bool announced) {
  const int shard = head.shard;
  std::optional<store::QueueHead> h(std::move(head));
  change(entry_of(h->name), shard, [&h, announced](View& v) {
    // An announced job is one more the queue holds. A head read again by the net holds at least
    // itself; it may be the one known, or one that replaced a head another master took.
    const auto same = [&h](const std::optional<store::QueueHead>& o) {
      return o && o->member == h->member;
    };
    if (!announced) {
      v.ready = std::max<std::int64_t>(v.ready, 1);
    } else if (!same(v.head) && !same(v.announced)) {
      ++v.ready;
    }
    if (v.busy) v.announced = better(v.announced, h);
    if (v.known) v.head = better(v.head, h);
  });
}

void QueueHeads::forget(std::string_view name) {
  auto it = names_.find(name);
  if (it != names_.end()) forget_shards(*it);
}

void QueueHeads::forget_all() {
  for (Entry& entry : names_) forget_shards(entry);
}

void QueueHeads::forget_shards(Entry& entry) {
  for (int s = 0; s < shards_; ++s) {
    change(entry, s, [](View& v) {
      // Being reserved from: its head as last known still bounds the others (else a queue that
      // may hold the best job would drop out of the choice), until its last answer.
      if (v.busy) {
        v.forgotten = true;
      } else {
        v.known = false;
      }
    });
  }
}

std::vector<store::QueueRef> QueueHeads::unknown(const std::vector<std::string>& names) {
  std::vector<store::QueueRef> out;
  for (const std::string& name : names) {
    const Name& n = name_of(name);
    for (int s = 0; s < shards_; ++s) {
      const View& v = n.shards[static_cast<std::size_t>(s)];
      if (!v.known && !v.busy) out.push_back({s, name});
    }
  }
  return out;
}

std::vector<QueueHeads::Known> QueueHeads::known(const std::vector<std::string>& names, int shard) {
  std::vector<Known> out;
  for (const std::string& name : names) {
    const View& v = name_of(name).shards[static_cast<std::size_t>(shard)];
    if (v.known && !v.busy) out.push_back({{shard, name}, v.begun});
  }
  return out;
}

void QueueHeads::read_again(const Known& queue, std::optional<store::QueueHead> head) {
  const View& v = name_of(queue.queue.name).shards[static_cast<std::size_t>(queue.queue.shard)];
  if (head && v.begun == queue.begun) merge(std::move(*head), false);
}

void QueueHeads::begin(const store::QueueRef& queue, int take) {
  change(entry_of(queue.name), queue.shard, [take](View& v) {
    ++v.begun;
    v.taking += take;
    if (v.busy++ > 0) return;  // announcements since the first one still count
    v.forgotten = false;
    v.announced.reset();
  });
}

// An answer other than the last may predate the calls still on their way, never what they
// leave: the head it gives runs no later than the one they will, so it serves until then.
void QueueHeads::settle(const store::QueueRef& queue, std::optional<store::QueueHead> fresh,
                        Reserved reserved) {
  change(entry_of(queue.name), queue.shard,
         [&fresh, reserved](View& v) { settle_view(v, std::move(fresh), reserved); });
}

void QueueHeads::settle_view(View& v, std::optional<store::QueueHead> fresh, Reserved reserved) {
  v.taking = std::max(0, v.taking - reserved.asked);
  // What it left (a read counts only the head), and a job announced meanwhile that the answer
  // may predate.
  v.ready = fresh ? std::max<std::int64_t>(reserved.left, 1) : 0;
  if (v.announced && !(fresh && fresh->member == v.announced->member)) ++v.ready;
  v.head = better(fresh, v.announced);
  if (v.busy > 0) --v.busy;
  if (v.busy > 0) return;
  v.taking = 0;  // nothing on its way asks for any
  v.known = !v.forgotten;
  v.announced.reset();
}

// Unknown after the last answer; until then the head as last known stays, as after forget().
void QueueHeads::fail(const store::QueueRef& queue, int asked) {
  change(entry_of(queue.name), queue.shard, [asked](View& v) {
    v.forgotten = true;
    if (v.busy > 1) {
      --v.busy;
      v.taking = std::max(0, v.taking - asked);
      return;
    }
    settle_view(v, std::nullopt, {asked, 0});
  });
}

std::optional<Choice> QueueHeads::choose(const std::vector<std::string>& names) {
  const View* best = nullptr;
  const View* second = nullptr;
  for (const std::string& name : names) {
    for (const View& v : name_of(name).shards) {
      if (!v.known || !v.head) continue;
      if (!best || v.head->before(*best->head)) {
        second = best;
        best = &v;
      } else if (!second || v.head->before(*second->head)) {
        second = &v;
      }
    }
  }
  if (!best) return std::nullopt;
  const bool tie = second && !best->head->before(*second->head);
  // Being reserved from, and maybe no more in it than those reservations take: their answers
  // tell. Not the next best instead (the best may hold more jobs that run before it), unless
  // the two tie exactly: below.
  if (!may_follow(*best) && !tie) return std::nullopt;
  Choice choice{*best->head, std::nullopt, false, best->ready - best->taking};
  if (!second) return choice;
  if (!tie) {
    choice.bound = *second->head;
    return choice;
  }
  // An exact tie is taken alone, unbounded: only from a queue whose head is really the one
  // known, not one being reserved from (its front may be past it by now).
  if (best->busy > 0) {
    if (second->busy > 0) return std::nullopt;
    choice.head = *second->head;
    choice.spare = second->ready - second->taking;
  }
  choice.head_only = true;
  return choice;
}

bool QueueHeads::busy(const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    for (const View& v : name_of(name).shards) {
      if (v.busy > 0) return true;
    }
  }
  return false;
}

bool QueueHeads::known_empty(std::string_view name) const {
  const auto it = names_.find(name);
  return it != names_.end() && it->second.not_empty == 0;  // a name never seen: not known
}

std::optional<store::QueueHead> QueueHeads::known_head(const store::QueueRef& queue) {
  const View& v = name_of(queue.name).shards[static_cast<std::size_t>(queue.shard)];
  if (!v.known) return std::nullopt;
  return v.head;
}

}  // namespace jq::scheduler
