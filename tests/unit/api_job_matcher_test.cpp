// The JobMatcher: globs on job names, JSON Pointers into MessagePack arguments, values compared
// by meaning, and the key a job counts in.
#include <catch2/catch.hpp>

#include <limits>
#include <string>
#include <vector>

#include "api/body.hpp"
#include "api/constraint.hpp"
#include "api/job_matcher.hpp"
#include "api_test_msgpack.hpp"

using jq::api::Constraint;
using jq::api::JobMatcher;
using jq::api::MatchedConstraint;
using jq::api::MediaType;
using jq::api::test::Mp;

namespace {

Constraint constraint(const std::string& json) {
  auto c = jq::api::decode_constraint(json, MediaType::json);
  REQUIRE(c);
  return *c;
}

// One constraint "c" on every name with the given conditions (a JSON array).
JobMatcher conditions(const std::string& argument_json) {
  return JobMatcher(
      {constraint(R"({"name":"c","match":{"name":"*","argument":)" + argument_json + "}}")});
}

bool matches(const JobMatcher& m, const std::string& argument, std::string_view name = "job") {
  return !m.match(name, argument).empty();
}

// The argument as MessagePack from JSON text (integers as the smallest int, floats as float64).
std::string arg(const std::string& json) {
  auto bytes = jq::api::json_to_msgpack(json);
  REQUIRE(bytes);
  return *bytes;
}

// Mp converts to std::string (not to string_view).
bool msgpack_equal(const std::string& a, const std::string& b) {
  return jq::api::msgpack_equal(a, b);
}

}  // namespace

TEST_CASE("globs match names with * for any run and ? for one character", "[unit]") {
  using jq::api::glob_match;
  CHECK(glob_match("*", ""));
  CHECK(glob_match("*", "anything"));
  CHECK(glob_match("mail.*", "mail.send"));
  CHECK(glob_match("mail.*", "mail."));
  CHECK_FALSE(glob_match("mail.*", "mail"));
  CHECK_FALSE(glob_match("mail.*", "email.send"));
  CHECK(glob_match("*.send", "mail.send"));
  CHECK(glob_match("a*b*c", "abc"));
  CHECK(glob_match("a*b*c", "aXXbYYbZc"));
  CHECK_FALSE(glob_match("a*b*c", "aXXbYYbZ"));
  CHECK(glob_match("a?c", "abc"));
  CHECK_FALSE(glob_match("a?c", "ac"));
  CHECK_FALSE(glob_match("a?c", "abbc"));
  CHECK(glob_match("exact", "exact"));
  CHECK_FALSE(glob_match("exact", "exactly"));
  CHECK_FALSE(glob_match("exact", "exac"));
  CHECK(glob_match("**a**", "a"));
  CHECK(glob_match("?*", "x"));
  CHECK_FALSE(glob_match("?*", ""));
  // Backtracking stays linear in practice: a long name against many stars.
  CHECK_FALSE(glob_match("*a*a*a*a*a*b", std::string(128, 'a')));
}

TEST_CASE("a constraint matches by name glob and every argument condition", "[unit]") {
  const JobMatcher m(
      {constraint(R"({"name":"mail-per-tenant","match":{"name":"mail.*","argument":[)"
                  R"({"path":"/kind","equals":"newsletter"},{"path":"/tenant","exists":true},)"
                  R"({"path":"/region","in":["eu","us"]}]},"key":"/tenant"})")});
  const std::string ok = arg(R"({"kind":"newsletter","tenant":"acme","region":"eu"})");
  CHECK(m.match("mail.send", ok) == std::vector<MatchedConstraint>{{"mail-per-tenant", "acme"}});
  CHECK(m.match("sms.send", ok).empty());
  CHECK(m.match("mail.send", arg(R"({"kind":"receipt","tenant":"acme","region":"eu"})")).empty());
  CHECK(m.match("mail.send", arg(R"({"kind":"newsletter","region":"eu"})")).empty());
  CHECK(m.match("mail.send", arg(R"({"kind":"newsletter","tenant":"a","region":"ap"})")).empty());
  CHECK(m.match("mail.send", arg("null")).empty());
}

TEST_CASE("a job may match several constraints, listed in their order", "[unit]") {
  const JobMatcher m({constraint(R"({"name":"all","match":{"name":"*"}})"),
                      constraint(R"({"name":"mail","match":{"name":"mail.*"},"key":"/t"})"),
                      constraint(R"({"name":"sms","match":{"name":"sms.*"}})")});
  CHECK(m.size() == 3);
  CHECK(m.match("mail.send", arg(R"({"t":7})")) ==
        std::vector<MatchedConstraint>{{"all", ""}, {"mail", "7"}});
  CHECK(m.match("other", arg("1")) == std::vector<MatchedConstraint>{{"all", ""}});
  CHECK(JobMatcher().match("x", arg("1")).empty());
}

TEST_CASE("pointers walk maps by key and arrays by index", "[unit]") {
  const std::string doc = arg(R"({"a":{"b":[10,{"c":"deep"}]},"x/y":1,"m~n":2,"":3,"0":4})");
  const auto at = [&](std::vector<std::string> tokens) { return jq::api::value_at(doc, tokens); };
  CHECK(at({}) == std::string_view(doc));
  CHECK(at({"a", "b", "0"}) == std::string_view(Mp().i(10).bytes()));
  CHECK(at({"a", "b", "1", "c"}) == std::string_view(Mp().str("deep").bytes()));
  CHECK(at({"x/y"}) == std::string_view(Mp().i(1).bytes()));
  CHECK(at({"m~n"}) == std::string_view(Mp().i(2).bytes()));
  CHECK(at({""}) == std::string_view(Mp().i(3).bytes()));
  CHECK(at({"0"}) == std::string_view(Mp().i(4).bytes()));
  CHECK_FALSE(at({"a", "b", "2"}));
  CHECK_FALSE(at({"a", "b", "01"}));
  CHECK_FALSE(at({"a", "b", "-"}));
  CHECK_FALSE(at({"a", "b", "x"}));
  CHECK_FALSE(at({"a", "b", "0", "z"}));  // into a number
  CHECK_FALSE(at({"nope"}));
  CHECK_FALSE(jq::api::value_at(arg(R"("text")"), {"a"}));
}

TEST_CASE("map keys that are not strings never match a token", "[unit]") {
  const std::string doc = Mp().map(2).i(1).str("int key").str("1").str("string key");
  CHECK(jq::api::value_at(doc, {"1"}) == std::string_view(Mp().str("string key").bytes()));
  const std::string only_int = Mp().map(1).i(1).str("int key");
  CHECK_FALSE(jq::api::value_at(only_int, {"1"}));
}

TEST_CASE("a missing path fails equals, in and exists true and passes exists false", "[unit]") {
  const std::string doc = arg(R"({"a":5,"s":"t"})");
  for (const char* path : {"/b", "/a/x", "/s/0", "/a/0"}) {
    INFO(path);
    CHECK_FALSE(
        matches(conditions(R"([{"path":")" + std::string(path) + R"(","equals":null}])"), doc));
    CHECK_FALSE(
        matches(conditions(R"([{"path":")" + std::string(path) + R"(","in":[null,5]}])"), doc));
    CHECK_FALSE(
        matches(conditions(R"([{"path":")" + std::string(path) + R"(","exists":true}])"), doc));
    CHECK(matches(conditions(R"([{"path":")" + std::string(path) + R"(","exists":false}])"), doc));
  }
  CHECK(matches(conditions(R"([{"path":"/a","exists":true}])"), doc));
  CHECK_FALSE(matches(conditions(R"([{"path":"/a","exists":false}])"), doc));
}

TEST_CASE("a nil value exists and equals null", "[unit]") {
  const std::string doc = arg(R"({"a":null})");
  CHECK(matches(conditions(R"([{"path":"/a","exists":true}])"), doc));
  CHECK(matches(conditions(R"([{"path":"/a","equals":null}])"), doc));
  CHECK_FALSE(matches(conditions(R"([{"path":"/a","equals":false}])"), doc));
}

TEST_CASE("numbers are equal by value whatever their encoding", "[unit]") {
  const std::string five[] = {Mp().i(5),
                              Mp().i32(5),
                              Mp().raw(std::string("\xcc\x05", 2)),
                              Mp().raw(std::string("\xcd\x00\x05", 3)),
                              Mp().raw(std::string("\xd0\x05", 2)),
                              Mp().raw(std::string("\xcf\0\0\0\0\0\0\0\x05", 9)),
                              Mp().raw(std::string("\xd3\0\0\0\0\0\0\0\x05", 9)),
                              Mp().f64(5.0),
                              Mp().f32(5.0f)};
  for (const auto& a : five) {
    for (const auto& b : five) CHECK(msgpack_equal(a, b));
  }
  CHECK_FALSE(msgpack_equal(Mp().i(5), Mp().i(6)));
  CHECK_FALSE(msgpack_equal(Mp().i(5), Mp().f64(5.5)));
  CHECK_FALSE(msgpack_equal(Mp().i(5), Mp().str("5")));
  CHECK(msgpack_equal(Mp().i(-1), Mp().raw(std::string("\xd2\xff\xff\xff\xff", 5))));
  CHECK_FALSE(msgpack_equal(Mp().i(-1), Mp().u(std::numeric_limits<std::uint64_t>::max())));
  CHECK(msgpack_equal(Mp().u(std::numeric_limits<std::uint64_t>::max()),
                      Mp().u(std::numeric_limits<std::uint64_t>::max())));
  CHECK(msgpack_equal(Mp().u(9223372036854775808ull), Mp().f64(9223372036854775808.0)));
  CHECK_FALSE(msgpack_equal(Mp().i(std::numeric_limits<std::int64_t>::max()),
                            Mp().f64(9223372036854775808.0)));
  CHECK_FALSE(msgpack_equal(Mp().f64(std::nan("")), Mp().f64(std::nan(""))));
  CHECK_FALSE(msgpack_equal(Mp().i(0), Mp().f64(std::nan(""))));
  CHECK(msgpack_equal(Mp().f64(0.5), Mp().f32(0.5f)));
  CHECK_FALSE(msgpack_equal(Mp().f64(0.1), Mp().f32(0.1f)));  // 0.1f is not 0.1
}

TEST_CASE("strings, bins and exts are equal by their bytes, never across types", "[unit]") {
  CHECK(msgpack_equal(Mp().str("abc"), Mp().raw("\xd9\x03"
                                                "abc")));  // str8 vs fixstr
  CHECK_FALSE(msgpack_equal(Mp().str("abc"), Mp().str("abd")));
  CHECK_FALSE(msgpack_equal(Mp().str("abc"), Mp().bin("abc")));
  CHECK(msgpack_equal(Mp().bin("abc"), Mp().bin("abc")));
  CHECK(msgpack_equal(Mp().ext(3, "ab"), Mp().ext(3, "ab")));
  CHECK_FALSE(msgpack_equal(Mp().ext(3, "ab"), Mp().ext(4, "ab")));
  CHECK(msgpack_equal(Mp().boolean(true), Mp().boolean(true)));
  CHECK_FALSE(msgpack_equal(Mp().boolean(true), Mp().boolean(false)));
  CHECK_FALSE(msgpack_equal(Mp().boolean(false), Mp().nil()));
  CHECK(msgpack_equal(Mp().nil(), Mp().nil()));
  CHECK_FALSE(msgpack_equal(Mp().nil(), Mp().i(0)));
}

TEST_CASE("arrays compare in order and maps whatever the order of their pairs", "[unit]") {
  CHECK(msgpack_equal(arg("[1,[2,3]]"), Mp().array(2).i(1).array(2).f64(2).i32(3)));
  CHECK_FALSE(msgpack_equal(arg("[1,2]"), arg("[2,1]")));
  CHECK_FALSE(msgpack_equal(arg("[1,2]"), arg("[1,2,3]")));
  CHECK(msgpack_equal(arg("[]"), arg("[]")));
  CHECK_FALSE(msgpack_equal(arg("[]"), arg("{}")));
  CHECK(msgpack_equal(arg(R"({"a":1,"b":{"c":[true]}})"),
                      Mp().map(2).str("b").map(1).str("c").array(1).boolean(true).str("a").f64(1)));
  CHECK_FALSE(msgpack_equal(arg(R"({"a":1,"b":2})"), arg(R"({"a":1})")));
  CHECK_FALSE(msgpack_equal(arg(R"({"a":1})"), arg(R"({"a":2})")));
  CHECK_FALSE(msgpack_equal(arg(R"({"a":1})"), arg(R"({"b":1})")));
  // Repeated keys do not make two different maps equal.
  CHECK_FALSE(msgpack_equal(Mp().map(2).str("a").i(1).str("a").i(1),
                            Mp().map(2).str("a").i(1).str("b").i(2)));
  // Integer keys compare by value too.
  CHECK(msgpack_equal(Mp().map(1).i(1).str("x"), Mp().map(1).f64(1.0).str("x")));
}

TEST_CASE("equals and in use the same comparison", "[unit]") {
  const JobMatcher equals = conditions(R"([{"path":"/n","equals":{"id":5,"tags":["a"]}}])");
  CHECK(
      matches(equals, Mp().map(1).str("n").map(2).str("tags").array(1).str("a").str("id").f64(5)));
  CHECK_FALSE(matches(equals, arg(R"({"n":{"id":5,"tags":["b"]}})")));
  const JobMatcher in = conditions(R"([{"path":"/n","in":[1,"two",[3]]}])");
  CHECK(matches(in, arg(R"({"n":1.0})")));
  CHECK(matches(in, arg(R"({"n":"two"})")));
  CHECK(matches(in, arg(R"({"n":[3]})")));
  CHECK_FALSE(matches(in, arg(R"({"n":3})")));
  CHECK_FALSE(matches(in, arg(R"({"n":"one"})")));
}

TEST_CASE("the root pointer compares the whole argument", "[unit]") {
  CHECK(matches(conditions(R"([{"path":"","equals":"ping"}])"), arg(R"("ping")")));
  CHECK_FALSE(matches(conditions(R"([{"path":"","equals":"ping"}])"), arg(R"("pong")")));
  CHECK(matches(conditions(R"([{"path":"","exists":true}])"), arg("null")));
}

TEST_CASE("keys are the value's text, null when absent, cut at 256 bytes", "[unit]") {
  using jq::api::constraint_key;
  CHECK(constraint_key(std::nullopt) == "null");
  CHECK(constraint_key(Mp().nil().bytes()) == "null");
  CHECK(constraint_key(Mp().str("acme").bytes()) == "acme");
  CHECK(constraint_key(Mp().str("").bytes()) == "");
  CHECK(constraint_key(Mp().i(-42).bytes()) == "-42");
  CHECK(constraint_key(Mp().u(std::numeric_limits<std::uint64_t>::max()).bytes()) ==
        "18446744073709551615");
  CHECK(constraint_key(Mp().f64(5.0).bytes()) == "5");
  CHECK(constraint_key(Mp().f32(2.5f).bytes()) == "2.5");
  CHECK(constraint_key(Mp().boolean(true).bytes()) == "true");
  CHECK(constraint_key(arg(R"({"b":[1,"x"],"a":null})")) == R"({"a":null,"b":[1,"x"]})");
  CHECK(constraint_key(Mp().bin("hi").bytes()) == R"({"$bin":"aGk="})");
  CHECK(constraint_key(Mp().str(std::string(300, 'k')).bytes()) == std::string(256, 'k'));
  // A cut never splits a UTF-8 sequence: 255 ASCII bytes and then a 2-byte character.
  CHECK(constraint_key(Mp().str(std::string(255, 'k') + "\xc3\xa9").bytes()) ==
        std::string(255, 'k'));
}

TEST_CASE("a job counts in the key of its key path's value", "[unit]") {
  const JobMatcher m({constraint(R"({"name":"t","match":{"name":"*"},"key":"/tenant/id"})")});
  CHECK(m.match("j", arg(R"({"tenant":{"id":"acme"}})")).front().key == "acme");
  CHECK(m.match("j", arg(R"({"tenant":{"id":17}})")).front().key == "17");
  CHECK(m.match("j", arg(R"({"tenant":{}})")).front().key == "null");
  CHECK(m.match("j", arg(R"({"tenant":"flat"})")).front().key == "null");
  CHECK(m.match("j", arg("null")).front().key == "null");
}

TEST_CASE("bytes that are not MessagePack match as far as they can be read", "[unit]") {
  const JobMatcher m({constraint(R"({"name":"t","match":{"name":"*","argument":[)"
                                 R"({"path":"/a","exists":false}]},"key":"/a"})")});
  for (const std::string& bad : {std::string(""), std::string("\xc1"), std::string("\x81\xa1"),
                                 std::string("\xdf\xff\xff\xff\xff")}) {
    const auto matched = m.match("j", bad);
    REQUIRE(matched.size() == 1);
    CHECK(matched.front().key == "null");
  }
  CHECK_FALSE(msgpack_equal("", ""));
  CHECK_FALSE(msgpack_equal("\xc1", "\xc1"));
}

TEST_CASE("constraints sharing a path each judge its one value, beyond the cached paths too",
          "[unit]") {
  std::vector<Constraint> constraints;
  // 20 constraints on 20 distinct paths (more than kMaxCachedPaths), then 3 on one shared path.
  for (int i = 0; i < 20; ++i) {
    constraints.push_back(constraint(R"({"name":"p)" + std::to_string(100 + i) +
                                     R"(","match":{"name":"*","argument":[{"path":"/k)" +
                                     std::to_string(i) + R"(","equals":)" + std::to_string(i) +
                                     R"(}]},"key":"/k)" + std::to_string(i) + R"("})"));
  }
  constraints.push_back(
      constraint(R"({"name":"s1","match":{"name":"*","argument":[{"path":"/t","equals":"a"}]}})"));
  constraints.push_back(constraint(
      R"({"name":"s2","match":{"name":"*","argument":[{"path":"/t","in":["b","a"]}]}})"));
  constraints.push_back(constraint(
      R"({"name":"s3","match":{"name":"*","argument":[{"path":"/t","exists":false}]},"key":"/t"})"));
  const JobMatcher m(constraints);
  std::string doc = R"({"t":"a")";
  for (int i = 0; i < 20; i += 2) doc += ",\"k" + std::to_string(i) + "\":" + std::to_string(i);
  const auto matched = m.match("job", arg(doc + "}"));
  std::vector<MatchedConstraint> expected;
  for (int i = 0; i < 20; i += 2) {
    expected.push_back({"p" + std::to_string(100 + i), std::to_string(i)});
  }
  expected.push_back({"s1", ""});
  expected.push_back({"s2", ""});
  CHECK(matched == expected);
  CHECK(m.match("job", arg(R"({"t":"b"})")) == std::vector<MatchedConstraint>{{"s2", ""}});
  CHECK(m.match("job", arg("{}")) == std::vector<MatchedConstraint>{{"s3", "null"}});
}
