// NamesWithWork: which names may have jobs, and per endpoint how many of its names do.
#include <memory>
#include <random>
#include <set>

#include <catch2/catch.hpp>

#include "src/scheduler/names_with_work.hpp"

using jq::scheduler::NamesWithWork;
using jq::workers::Endpoint;

namespace {

std::shared_ptr<const Endpoint> serving(std::vector<std::string> names) {
  auto e = std::make_shared<Endpoint>();
  e->names = std::move(names);
  return e;
}

std::shared_ptr<const Endpoint> serving_all() {
  auto e = std::make_shared<Endpoint>();
  e->all_names = true;
  return e;
}

}  // namespace

TEST_CASE("an endpoint counts the names it serves that may have work", "[unit]") {
  NamesWithWork work;
  const auto mail = serving({"mail", "resize"});
  const auto all = serving_all();
  work.endpoints({mail, all});
  CHECK(work.count(*mail) == 0);
  CHECK(work.names(*all).empty());

  work.set("report", true);
  work.set("resize", true);
  CHECK(work.count(*mail) == 1);
  CHECK(work.names(*mail) == std::vector<std::string>{"resize"});
  CHECK(work.count(*all) == 2);
  CHECK(work.names(*all) == std::vector<std::string>{"report", "resize"});

  work.set("resize", true);  // no change: counted once
  CHECK(work.count(*mail) == 1);
  work.set("mail", true);
  CHECK(work.names(*mail) == std::vector<std::string>{"mail", "resize"});
  work.set("resize", false);
  work.set("mail", false);
  CHECK(work.count(*mail) == 0);
  CHECK(work.count(*all) == 1);
}

TEST_CASE("endpoints registered after names changed count them, a name listed twice once",
          "[unit]") {
  NamesWithWork work;
  work.set("mail", true);
  work.set("sms", true);
  const auto twice = serving({"mail", "mail", "push"});
  const auto unknown = serving({"sms"});  // not given to endpoints(): counted all the same
  work.endpoints({twice});
  CHECK(work.count(*twice) == 1);
  CHECK(work.names(*twice) == std::vector<std::string>{"mail"});
  CHECK(work.count(*unknown) == 1);
  work.set("mail", false);
  CHECK(work.count(*twice) == 0);
  work.set("push", true);
  CHECK(work.count(*twice) == 1);
}

// The counts are kept as names change; here they are checked against the names themselves after
// every step of a long random sequence, with the endpoints registered again now and then.
TEST_CASE("counts follow every change of names and endpoints", "[unit]") {
  const std::vector<std::string> names{"a", "b", "c", "d", "e", "f"};
  std::mt19937 random(15);
  const auto pick = [&random](int n) { return static_cast<int>(random() % n); };
  const auto draw_endpoints = [&] {
    std::vector<std::shared_ptr<const Endpoint>> out;
    const int n = 1 + pick(5);
    for (int i = 0; i < n; ++i) {
      if (pick(6) == 0) {
        out.push_back(serving_all());
        continue;
      }
      std::vector<std::string> served;
      const int m = 1 + pick(4);
      for (int j = 0; j < m; ++j) served.push_back(names[static_cast<std::size_t>(pick(6))]);
      out.push_back(serving(std::move(served)));
    }
    return out;
  };
  NamesWithWork work;
  std::set<std::string> with_work;
  auto endpoints = draw_endpoints();
  work.endpoints(endpoints);
  int nonzero = 0;
  for (int step = 0; step < 20000; ++step) {
    if (pick(50) == 0) {
      endpoints = draw_endpoints();
      work.endpoints(endpoints);
    } else {
      const std::string& name = names[static_cast<std::size_t>(pick(6))];
      const bool has = pick(2) == 0;
      work.set(name, has);
      if (has) {
        with_work.insert(name);
      } else {
        with_work.erase(name);
      }
    }
    for (const auto& e : endpoints) {
      std::set<std::string> expected;
      for (const std::string& n : with_work) {
        if (e->serves(n)) expected.insert(n);
      }
      REQUIRE(work.count(*e) == expected.size());
      REQUIRE(work.names(*e) == std::vector<std::string>(expected.begin(), expected.end()));
      nonzero += expected.empty() ? 0 : 1;
    }
  }
  CHECK(nonzero > 1000);
}

TEST_CASE("served lists the known names some endpoint serves, paused ones left out", "[unit]") {
  NamesWithWork work;
  const std::set<std::string> known{"mail", "push", "report", "sms"};
  work.endpoints({serving({"sms", "mail", "unknown"}), serving({"mail"})});
  CHECK(work.served(known, {}) == std::vector<std::string>{"mail", "sms"});
  CHECK(work.served(known, {"sms"}) == std::vector<std::string>{"mail"});
  work.endpoints({serving({"sms"}), serving_all()});
  CHECK(work.served(known, {"push"}) == std::vector<std::string>{"mail", "report", "sms"});
  work.endpoints({});
  CHECK(work.served(known, {}).empty());
}
