// QueueHeads: what the scheduler believes about queue heads, and its choice of the next queue.
#include <map>
#include <random>

#include <catch2/catch.hpp>

#include "src/scheduler/queue_heads.hpp"

using jq::scheduler::QueueHeads;
using jq::store::QueueHead;
using jq::store::QueueRef;

namespace {

// A member sorts by its ready stamp: "000000010" + field.
QueueHead head(int shard, const std::string& name, std::int64_t priority, int stamp) {
  std::string member = std::to_string(stamp);
  member = std::string(9 - member.size(), '0') + member + "00000000" + std::to_string(shard);
  return QueueHead{shard, name, priority, member};
}

// Every shard of `names` read from Redis: `found` as their heads, the rest empty.
void read_all(QueueHeads& heads, const std::vector<std::string>& names,
              const std::vector<QueueHead>& found) {
  for (const QueueRef& q : heads.unknown(names)) {
    heads.begin(q);
    std::optional<QueueHead> h;
    for (const auto& f : found) {
      if (f.shard == q.shard && f.name == q.name) h = f;
    }
    heads.settle(q, h);
  }
}

// Two shards of "mail" read with exactly the same head (retries due at the same moment).
void read_tie(QueueHeads& heads) {
  QueueHead a = head(0, "mail", 1, 10);
  QueueHead b = a;
  b.shard = 1;
  read_all(heads, {"mail"}, {a, b});
}

}  // namespace

TEST_CASE("a queue's head is unknown until read, then empty or the job read", "[unit]") {
  QueueHeads heads(2);
  CHECK(heads.unknown({"mail"}).size() == 2);
  CHECK_FALSE(heads.choose({"mail"}));
  read_all(heads, {"mail"}, {head(1, "mail", 5, 10)});
  CHECK(heads.unknown({"mail"}).empty());
  const auto choice = heads.choose({"mail"});
  REQUIRE(choice);
  CHECK(choice->head.shard == 1);
  CHECK_FALSE(choice->bound);
  CHECK_FALSE(choice->head_only);
}

TEST_CASE("the smallest priority runs first, across shards and names", "[unit]") {
  QueueHeads heads(3);
  read_all(heads, {"mail", "resize"},
           {head(0, "mail", 5, 1), head(1, "mail", -2, 50), head(2, "resize", 3, 2)});
  const auto choice = heads.choose({"mail", "resize"});
  REQUIRE(choice);
  CHECK(choice->head.shard == 1);
  CHECK(choice->head.priority == -2);
  REQUIRE(choice->bound);  // reserve only what runs before the next best head
  CHECK(choice->bound->name == "resize");
  CHECK(choice->bound->priority == 3);
}

TEST_CASE("among equal priorities the job ready first runs first", "[unit]") {
  QueueHeads heads(2);
  read_all(heads, {"mail"}, {head(0, "mail", 1, 20), head(1, "mail", 1, 10)});
  const auto choice = heads.choose({"mail"});
  REQUIRE(choice);
  CHECK(choice->head.shard == 1);
  CHECK(choice->bound->shard == 0);
}

TEST_CASE("an exact tie of two heads takes the chosen head alone", "[unit]") {
  QueueHeads heads(2);
  read_tie(heads);
  const auto choice = heads.choose({"mail"});
  REQUIRE(choice);
  CHECK(choice->head_only);
  CHECK_FALSE(choice->bound);
}

TEST_CASE("names not asked for (paused, or not served) are never chosen", "[unit]") {
  QueueHeads heads(1);
  read_all(heads, {"mail", "paused"}, {head(0, "mail", 5, 1), head(0, "paused", -9, 1)});
  const auto choice = heads.choose({"mail"});
  REQUIRE(choice);
  CHECK(choice->head.name == "mail");
  CHECK_FALSE(choice->bound);
}

TEST_CASE("an announcement improves a known head and never worsens it", "[unit]") {
  QueueHeads heads(1);
  read_all(heads, {"mail"}, {head(0, "mail", 5, 10)});
  heads.announce(head(0, "mail", 7, 1));  // worse priority: the head stays
  CHECK(heads.known_head({0, "mail"})->priority == 5);
  heads.announce(head(0, "mail", 2, 99));
  CHECK(heads.known_head({0, "mail"})->priority == 2);
}

TEST_CASE("an announcement for an unknown queue does not make it known", "[unit]") {
  QueueHeads heads(1);
  heads.announce(head(0, "mail", 2, 99));
  CHECK_FALSE(heads.known_head({0, "mail"}));
  CHECK(heads.unknown({"mail"}).size() == 1);
}

TEST_CASE("announcements during a read are merged into its answer", "[unit]") {
  QueueHeads heads(1);
  const QueueRef q{0, "mail"};
  heads.begin(q);
  CHECK(heads.unknown({"mail"}).empty());  // not read twice
  CHECK_FALSE(heads.choose({"mail"}));     // nor chosen while busy
  heads.announce(head(0, "mail", 1, 50));
  heads.settle(q, head(0, "mail", 3, 10));  // the answer predates the announcement
  CHECK(heads.known_head(q)->priority == 1);
}

TEST_CASE("a queue forgotten during a read stays unknown after its answer", "[unit]") {
  QueueHeads heads(1);
  const QueueRef q{0, "mail"};
  heads.begin(q);
  heads.forget("mail");
  heads.settle(q, head(0, "mail", 3, 10));
  CHECK_FALSE(heads.known_head(q));
  CHECK(heads.unknown({"mail"}).size() == 1);
}

TEST_CASE("known() lists the queues of a shard whose head is known, empty or not, none being read",
          "[unit]") {
  QueueHeads heads(3);
  CHECK(heads.known({"mail"}, 1).empty());  // never read
  read_all(heads, {"mail", "sms"}, {head(1, "mail", 0, 1)});
  const auto known = heads.known({"mail", "sms"}, 1);
  REQUIRE(known.size() == 2);
  CHECK((known[0].queue.name == "mail" && known[1].queue.name == "sms"));
  CHECK(known[1].queue.shard == 1);
  heads.begin(QueueRef{2, "mail"});
  REQUIRE(heads.known({"mail", "sms"}, 2).size() == 1);
  CHECK(heads.known({"mail", "sms"}, 2)[0].queue.name == "sms");
}

TEST_CASE("a head read again is announced unless a reservation began since", "[unit]") {
  QueueHeads heads(2);
  read_all(heads, {"mail"}, {});
  REQUIRE(heads.known_empty("mail"));
  const std::vector<QueueHeads::Known> known{heads.known({"mail"}, 0).at(0),
                                             heads.known({"mail"}, 1).at(0)};
  // Shard 0: nothing happened since; its job was never announced.
  heads.read_again(known[0], head(0, "mail", 3, 1));
  REQUIRE(heads.known_head(QueueRef{0, "mail"}));
  CHECK(heads.known_head(QueueRef{0, "mail"})->member == head(0, "mail", 3, 1).member);
  // Shard 1: a reservation began and came back empty since: the read predates it.
  heads.begin(QueueRef{1, "mail"});
  heads.settle(QueueRef{1, "mail"}, std::nullopt);
  heads.read_again(known[1], head(1, "mail", 0, 1));
  CHECK_FALSE(heads.known_head(QueueRef{1, "mail"}));
  // A reservation begun since and still on its way: the read may predate what it takes, so its
  // head is not announced, not even into the reservation's answer.
  read_all(heads, {"sms"}, {});
  const auto sms = heads.known({"sms"}, 0).at(0);
  heads.begin(QueueRef{0, "sms"});
  heads.read_again(sms, head(0, "sms", 0, 1));
  heads.settle(QueueRef{0, "sms"}, std::nullopt);
  CHECK_FALSE(heads.known_head(QueueRef{0, "sms"}));
  CHECK(heads.known_empty("sms"));
  // An empty answer changes nothing: the head known stays.
  heads.read_again(known[0], std::nullopt);
  CHECK(heads.known_head(QueueRef{0, "mail"}));
}

TEST_CASE("a failed read leaves the queue unknown, forget_all forgets every queue", "[unit]") {
  QueueHeads heads(2);
  heads.begin({0, "mail"});
  heads.fail({0, "mail"});
  CHECK(heads.unknown({"mail"}).size() == 2);
  read_all(heads, {"mail", "resize"}, {head(1, "mail", 1, 1), head(0, "resize", 1, 2)});
  CHECK(heads.choose({"mail", "resize"}));
  heads.forget_all();
  CHECK_FALSE(heads.choose({"mail", "resize"}));
  CHECK(heads.unknown({"mail", "resize"}).size() == 4);
}

TEST_CASE("queues are known empty only when every shard was read empty and nothing came since",
          "[unit]") {
  QueueHeads heads(2);
  CHECK_FALSE(heads.known_empty("mail"));  // never read
  read_all(heads, {"mail", "sms"}, {});
  CHECK((heads.known_empty("mail") && heads.known_empty("sms")));
  heads.announce(head(1, "sms", 0, 10));
  CHECK(heads.known_empty("mail"));
  CHECK_FALSE(heads.known_empty("sms"));
  heads.begin(QueueRef{0, "mail"});  // being read: its answer may hold a job
  CHECK_FALSE(heads.known_empty("mail"));
  heads.settle(QueueRef{0, "mail"}, std::nullopt);
  CHECK(heads.known_empty("mail"));
  heads.forget_all();
  CHECK_FALSE(heads.known_empty("mail"));
}

// known_empty() answers from a count kept as each view changes; here it is checked against the
// views themselves (through the other questions) after every step of a long random sequence.
// It also checks that the scheduler is told each change of that answer, and only changes.
TEST_CASE("known_empty follows every announce, forget, begin, settle and fail", "[unit]") {
  std::map<std::string, bool> told;  // what on_empty said last; a name never told: not empty
  int tellings = 0;
  QueueHeads heads(3, [&told, &tellings](const std::string& name, bool known_empty) {
    REQUIRE(told[name] != known_empty);  // told only of a change
    told[name] = known_empty;
    ++tellings;
  });
  const std::vector<std::string> names{"mail", "sms", "push"};
  std::mt19937 random(14);
  const auto pick = [&random](int n) { return static_cast<int>(random() % n); };
  int checked_empty = 0;
  for (int step = 0; step < 20000; ++step) {
    const std::string& name = names[static_cast<std::size_t>(pick(3))];
    const QueueRef q{pick(3), name};
    // Drawn one by one: the order in which a call's arguments are evaluated is unspecified.
    const int kind = pick(7);
    const int priority = pick(3);
    const int stamp = pick(100);
    switch (kind) {
      case 0:
        heads.announce(head(q.shard, name, priority, stamp));
        break;
      case 1:
        heads.forget(name);
        break;
      case 2:
        if (pick(20) == 0) heads.forget_all();
        break;
      case 3:
        heads.begin(q);
        break;
      case 4:
        heads.settle(
            q, stamp % 2 == 0 ? std::nullopt : std::optional(head(q.shard, name, priority, stamp)));
        break;
      case 5:
        heads.fail(q);
        break;
      default:
        read_all(heads, {name}, {});
    }
    for (const std::string& n : names) {
      bool expected = heads.unknown({n}).empty() && !heads.busy({n});
      for (int s = 0; s < 3; ++s) expected = expected && !heads.known_head(QueueRef{s, n});
      REQUIRE(heads.known_empty(n) == expected);
      REQUIRE(told[n] == expected);
      checked_empty += expected ? 1 : 0;
    }
  }
  CHECK(checked_empty > 1000);  // the sequence reached the empty state often, not only its opposite
  CHECK(tellings > 200);        // 482 changes in this sequence
}

TEST_CASE("a queue being reserved from is chosen again, as last known, until its last answer",
          "[unit]") {
  QueueHeads heads(2);
  read_all(heads, {"mail"}, {head(0, "mail", 1, 10), head(1, "mail", 1, 40)});
  const QueueRef q{0, "mail"};
  heads.begin(q);                          // a reservation bounded by shard 1's head
  heads.announce(head(0, "mail", 2, 80));  // may postdate both answers
  auto again = heads.choose({"mail"});
  REQUIRE(again);  // another one may follow it: Redis takes from the front, in turn
  CHECK(again->head.shard == 0);
  REQUIRE(again->bound);
  CHECK(again->bound->shard == 1);
  heads.begin(q);
  CHECK(heads.unknown({"mail"}).empty());
  CHECK_FALSE(heads.known_empty("mail"));
  CHECK(heads.busy({"mail"}));

  heads.settle(q, std::nullopt);  // the first answer: the second one took what was left
  REQUIRE(heads.known_head(q));
  CHECK(heads.known_head(q)->priority == 2);  // the announcement, kept for the last answer
  heads.announce(head(0, "mail", 0, 90));
  heads.settle(q, std::nullopt);
  REQUIRE(heads.known_head(q));
  CHECK(heads.known_head(q)->priority == 0);  // both announcements merged, the best kept
  CHECK_FALSE(heads.busy({"mail"}));

  heads.begin(q);
  heads.begin(q);
  heads.fail(q);                 // unknown once the other answer is in, and not read before
  REQUIRE(heads.known_head(q));  // until then its head as last known still bounds the others
  CHECK(heads.known_head(q)->priority == 0);
  CHECK(heads.unknown({"mail"}).empty());
  heads.settle(q, head(0, "mail", 0, 95));
  CHECK_FALSE(heads.known_head(q));
  CHECK(heads.unknown({"mail"}).size() == 1);
}

TEST_CASE("a queue being reserved from bounds the others by its head as last known", "[unit]") {
  QueueHeads heads(2);
  read_all(heads, {"mail"}, {head(0, "mail", 1, 10), head(1, "mail", 5, 40)});
  heads.begin({0, "mail"});
  heads.begin({1, "mail"});  // both being reserved from: shard 0 still runs first
  const auto choice = heads.choose({"mail"});
  REQUIRE(choice);
  CHECK(choice->head.shard == 0);
  heads.settle({1, "mail"}, head(1, "mail", 5, 50));

  heads.forget_all();  // the tick, while shard 0's reservation is on its way
  const auto unread = heads.unknown({"mail"});
  REQUIRE(unread.size() == 1);
  CHECK(unread[0].shard == 1);
  const auto kept = heads.choose({"mail"});
  REQUIRE(kept);  // not shard 1 unbounded: shard 0 may still hold priority 1 jobs
  CHECK(kept->head.shard == 0);

  heads.settle({0, "mail"}, std::nullopt);
  CHECK_FALSE(heads.choose({"mail"}));  // both unknown now, to be read again
  CHECK(heads.unknown({"mail"}).size() == 2);
}

TEST_CASE("an exact tie is taken alone only from a queue not being reserved from", "[unit]") {
  QueueHeads heads(2);
  read_tie(heads);
  const auto first = heads.choose({"mail"});
  REQUIRE(first);
  REQUIRE(first->head_only);
  const QueueRef q{first->head.shard, "mail"};
  heads.begin(q);  // its front may be past the tied head by now
  const auto other = heads.choose({"mail"});
  REQUIRE(other);
  CHECK(other->head_only);
  CHECK(other->head.shard != q.shard);
  heads.begin({other->head.shard, "mail"});
  CHECK_FALSE(heads.choose({"mail"}));  // both: wait for an answer
  CHECK(heads.busy({"mail"}));
}

TEST_CASE("a queue being reserved from is not chosen again for the jobs already asked for",
          "[unit]") {
  QueueHeads heads(2);
  read_all(heads, {"mail"}, {head(0, "mail", 1, 10), head(1, "mail", 5, 40)});
  const QueueRef q{0, "mail"};
  heads.begin(q, 1);  // one endpoint asks for one job: the head, all that is known of the queue
  CHECK_FALSE(heads.choose({"mail"}));  // the others wait for its answer, not for shard 1's job
  CHECK(heads.busy({"mail"}));

  heads.announce(head(0, "mail", 1, 20));  // one more job: one more reservation may follow
  const auto follow = heads.choose({"mail"});
  REQUIRE(follow);
  CHECK(follow->head.shard == 0);
  heads.begin(q, 1);
  CHECK_FALSE(heads.choose({"mail"}));

  heads.settle(q, head(0, "mail", 1, 20), {1, 1});
  CHECK_FALSE(heads.choose({"mail"}));  // the second one asks for the job left
  heads.settle(q, std::nullopt, {1, 0});
  CHECK_FALSE(heads.busy({"mail"}));
}

TEST_CASE("reservations follow one another for as many jobs as Redis counted left", "[unit]") {
  QueueHeads heads(1);
  read_all(heads, {"mail"}, {head(0, "mail", 1, 10)});
  const QueueRef q{0, "mail"};
  heads.begin(q, 5);
  heads.settle(q, head(0, "mail", 1, 60), {5, 5});  // 5 jobs left after it
  heads.begin(q, 3);
  REQUIRE(heads.choose({"mail"}));  // 3 of the 5 asked for
  heads.begin(q, 2);
  CHECK_FALSE(heads.choose({"mail"}));
  heads.settle(q, head(0, "mail", 1, 80), {3, 3});  // pushed meanwhile, unannounced: counted
  CHECK(heads.choose({"mail"}));                    // 3 left, the other one asks for 2
  heads.begin(q, 1);
  CHECK_FALSE(heads.choose({"mail"}));
  heads.settle(q, std::nullopt, {2, 0});  // the last answer's count is the one kept
  heads.settle(q, std::nullopt, {1, 0});
  CHECK_FALSE(heads.choose({"mail"}));
  CHECK(heads.known_empty("mail"));
}

TEST_CASE("a choice says how many jobs its queue holds beyond those asked for", "[unit]") {
  QueueHeads heads(1);
  read_all(heads, {"mail"}, {head(0, "mail", 1, 10)});
  const QueueRef q{0, "mail"};
  REQUIRE(heads.choose({"mail"}));
  CHECK(heads.choose({"mail"})->spare == 1);  // a read knows the head only
  heads.begin(q, 5);
  heads.settle(q, head(0, "mail", 1, 60), {5, 20});
  CHECK(heads.choose({"mail"})->spare == 20);
  heads.begin(q, 8);
  REQUIRE(heads.choose({"mail"}));
  CHECK(heads.choose({"mail"})->spare == 12);
}

TEST_CASE("a tie with a queue not being reserved from is taken there, whatever the other holds",
          "[unit]") {
  QueueHeads heads(2);
  read_tie(heads);
  const auto first = heads.choose({"mail"});
  REQUIRE(first);
  heads.begin({first->head.shard, "mail"}, 1);  // all it is known to hold
  const auto other = heads.choose({"mail"});
  REQUIRE(other);
  CHECK(other->head_only);
  CHECK(other->head.shard != first->head.shard);
}

TEST_CASE("a head read again by the net counts once", "[unit]") {
  QueueHeads heads(1);
  read_all(heads, {"mail"}, {head(0, "mail", 1, 10)});
  const auto known = heads.known({"mail"}, 0);
  REQUIRE(known.size() == 1);
  heads.read_again(known[0], head(0, "mail", 1, 10));  // the job already known
  heads.begin({0, "mail"}, 1);
  CHECK_FALSE(heads.choose({"mail"}));
  heads.settle({0, "mail"}, std::nullopt, {1, 0});
  const auto again = heads.known({"mail"}, 0);
  REQUIRE(again.size() == 1);
  heads.read_again(again[0], head(0, "mail", 1, 30));  // a job whose announcement was missed
  heads.read_again(again[0], head(0, "mail", 1, 30));
  heads.read_again(again[0], head(0, "mail", 1, 40));  // or a head another master left
  heads.begin({0, "mail"}, 1);
  CHECK_FALSE(heads.choose({"mail"}));
}
