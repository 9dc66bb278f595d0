// The metrics registry and its Prometheus text exposition: counters, gauges, histograms with
// cumulative buckets, label escaping, and the cap on distinct label values.
#include <catch2/catch.hpp>

#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "src/metrics/capped_labels.hpp"
#include "src/metrics/exposition.hpp"
#include "src/metrics/metrics.hpp"
#include "src/metrics/registry.hpp"

using namespace jq::metrics;

namespace {

std::string exposed(const Registry& registry) {
  std::string out;
  registry.expose(out);
  return out;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("a counter family writes HELP, TYPE and one line per label set, sorted", "[unit]") {
  Registry registry;
  auto& pushed = registry.counter("jq_test_total", "Things counted.", {"name"});
  pushed.with({"b"}).inc(2);
  pushed.with({"a"}).inc();
  pushed.with({"a"}).inc();
  CHECK(exposed(registry) ==
        "# HELP jq_test_total Things counted.\n"
        "# TYPE jq_test_total counter\n"
        "jq_test_total{name=\"a\"} 2\n"
        "jq_test_total{name=\"b\"} 2\n");
}

TEST_CASE("a family without labels is exposed at zero before its first use", "[unit]") {
  Registry registry;
  registry.counter("jq_none_total", "Nothing yet.");
  registry.gauge("jq_level", "A level.");
  CHECK(exposed(registry) ==
        "# HELP jq_none_total Nothing yet.\n# TYPE jq_none_total counter\njq_none_total 0\n"
        "# HELP jq_level A level.\n# TYPE jq_level gauge\njq_level 0\n");
}

TEST_CASE("a child found again is the same child", "[unit]") {
  Registry registry;
  auto& family = registry.gauge("jq_g", "g", {"worker", "kind"});
  Gauge& first = family.with({"w", "k"});
  first.add(3);
  first.add(-1.5);
  CHECK(&family.with({"w", "k"}) == &first);
  CHECK(first.value() == 1.5);
  CHECK_THROWS_AS(family.with({"only-one"}), std::invalid_argument);
}

TEST_CASE("label values escape backslash, double quote and newline, and HELP escapes too",
          "[unit]") {
  CHECK(escape_label_value("plain") == "plain");
  CHECK(escape_label_value(R"(a\b"c)"
                           "\nd") == R"(a\\b\"c\nd)");
  CHECK(escape_help("say \"hi\"\\\n") == "say \"hi\"\\\\\\n");
  Registry registry;
  registry.counter("jq_e_total", "Line one\nline two.", {"url"}).with({"http://x/\"q\"\\"}).inc();
  const std::string out = exposed(registry);
  CHECK(contains(out, "# HELP jq_e_total Line one\\nline two.\n"));
  CHECK(contains(out, "jq_e_total{url=\"http://x/\\\"q\\\"\\\\\"} 1\n"));
}

TEST_CASE("values print as integers, shortest decimals and the format's infinities", "[unit]") {
  CHECK(format_value(0) == "0");
  CHECK(format_value(42) == "42");
  CHECK(format_value(-3) == "-3");
  CHECK(format_value(0.25) == "0.25");
  CHECK(format_value(0.0001) == "0.0001");
  CHECK(format_value(86400) == "86400");
  CHECK(format_value(1e20) == "1e+20");
  CHECK(format_value(std::numeric_limits<double>::infinity()) == "+Inf");
  CHECK(format_value(-std::numeric_limits<double>::infinity()) == "-Inf");
  CHECK(format_value(std::numeric_limits<double>::quiet_NaN()) == "NaN");
}

TEST_CASE("histogram buckets are cumulative, bounds inclusive, +Inf equals the count", "[unit]") {
  Registry registry;
  auto& family = registry.histogram("jq_h_seconds", "Timing.", {0.125, 0.5, 1}, {"worker"});
  Histogram& h = family.with({"w1"});
  for (double v : {0.0625, 0.125, 0.25, 0.75, 2.0}) h.observe(v);
  CHECK(exposed(registry) ==
        "# HELP jq_h_seconds Timing.\n"
        "# TYPE jq_h_seconds histogram\n"
        "jq_h_seconds_bucket{worker=\"w1\",le=\"0.125\"} 2\n"
        "jq_h_seconds_bucket{worker=\"w1\",le=\"0.5\"} 3\n"
        "jq_h_seconds_bucket{worker=\"w1\",le=\"1\"} 4\n"
        "jq_h_seconds_bucket{worker=\"w1\",le=\"+Inf\"} 5\n"
        "jq_h_seconds_sum{worker=\"w1\"} 3.1875\n"
        "jq_h_seconds_count{worker=\"w1\"} 5\n");
}

TEST_CASE("a histogram without labels puts le alone in braces", "[unit]") {
  Registry registry;
  registry.histogram("jq_p_seconds", "Push.", {0.001}).only().observe(0.0005);
  const std::string out = exposed(registry);
  CHECK(contains(out, "jq_p_seconds_bucket{le=\"0.001\"} 1\n"));
  CHECK(contains(out, "jq_p_seconds_bucket{le=\"+Inf\"} 1\n"));
  CHECK(contains(out, "jq_p_seconds_sum 0.0005\n"));
  CHECK(contains(out, "jq_p_seconds_count 1\n"));
}

TEST_CASE("histogram bounds must ascend", "[unit]") {
  Registry registry;
  CHECK_THROWS_AS(registry.histogram("jq_bad", "b", {1, 0.5}), std::invalid_argument);
}

TEST_CASE("counts from many threads add up", "[unit]") {
  Registry registry;
  auto& family = registry.counter("jq_c_total", "c", {"name"});
  Histogram& h = registry.histogram("jq_t_seconds", "t", {1}).only();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        family.with({"n"}).inc();
        h.observe(0.5);
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(family.with({"n"}).value() == 40000);
  CHECK(h.snapshot().count() == 40000);
  CHECK(h.snapshot().sum == 20000);
}

TEST_CASE("values past the cap share the _other bundle, and earlier ones keep theirs", "[unit]") {
  int made = 0;
  CappedLabels<std::string> labels(2, [&made](const std::string& label) {
    ++made;
    return label;
  });
  CHECK(labels.get("a") == "a");
  CHECK(labels.get("b") == "b");
  CHECK(labels.get("c") == "_other");
  CHECK(labels.get("d") == "_other");
  CHECK(&labels.get("c") == &labels.get("d"));
  CHECK(labels.get("a") == "a");  // admitted before the cap: kept
  CHECK(labels.admits("b"));
  CHECK_FALSE(labels.admits("e"));
  CHECK(made == 3);  // a, b and _other, each made once
}

TEST_CASE("a value spelled _other never gets a bundle of its own", "[unit]") {
  CappedLabels<std::string> labels(5, [](const std::string& label) { return label; });
  CHECK_FALSE(labels.admits("_other"));
  CHECK(labels.admits("x"));
}

TEST_CASE("the daemon's metrics fold job names past max_job_names into name=\"_other\"", "[unit]") {
  Metrics metrics(2);
  metrics.job("first").pushed.inc();
  metrics.job("second").pushed.inc(2);
  metrics.job("third").pushed.inc(3);
  metrics.job("fourth").succeeded.inc();
  std::string out;
  metrics.expose(out);
  CHECK(contains(out, "jq_jobs_pushed_total{name=\"first\"} 1\n"));
  CHECK(contains(out, "jq_jobs_pushed_total{name=\"second\"} 2\n"));
  CHECK(contains(out, "jq_jobs_pushed_total{name=\"_other\"} 3\n"));
  CHECK(contains(out, "jq_jobs_succeeded_total{name=\"_other\"} 1\n"));
  CHECK_FALSE(contains(out, "third"));
  CHECK_FALSE(contains(out, "fourth"));
  CHECK(metrics.has_own_label("first"));
  CHECK_FALSE(metrics.has_own_label("fifth"));
}

TEST_CASE("HTTP requests are counted by route, method and status", "[unit]") {
  Metrics metrics(10);
  metrics.http_request("/v1/jobs/{id}", "GET", 200).inc();
  metrics.http_request("/v1/jobs/{id}", "GET", 200).inc();
  metrics.http_request("unmatched", "GET", 404).inc();
  CHECK(&metrics.http_request("/v1/jobs/{id}", "GET", 200) !=
        &metrics.http_request("/v1/jobs/{id}", "GET", 404));
  std::string out;
  metrics.expose(out);
  CHECK(contains(
      out, "jq_http_requests_total{route=\"/v1/jobs/{id}\",method=\"GET\",status=\"200\"} 2\n"));
  CHECK(contains(out,
                 "jq_http_requests_total{route=\"unmatched\",method=\"GET\",status=\"404\"} 1\n"));
}

TEST_CASE("scrape-time gauges are written with their header and samples", "[unit]") {
  std::string out;
  const std::vector<ScrapedSample> samples = {{{"q1"}, 3}, {{"q2"}, 0.5}};
  write_scraped(out, Desc{"jq_queue_ready", "Ready.", Type::gauge, {"name"}}, samples);
  CHECK(out ==
        "# HELP jq_queue_ready Ready.\n# TYPE jq_queue_ready gauge\n"
        "jq_queue_ready{name=\"q1\"} 3\njq_queue_ready{name=\"q2\"} 0.5\n");
}

TEST_CASE("scrape-time counters keep their type, and a family with no samples its header",
          "[unit]") {
  std::string out;
  const std::vector<ScrapedSample> samples = {{{"mail", "rate"}, 0.25}};
  write_scraped(out, Desc{"jq_c_total", "Counted.", Type::counter, {"constraint", "kind"}},
                samples);
  write_scraped(out, Desc{"jq_none", "Nothing.", Type::gauge, {"name"}}, {});
  CHECK(out ==
        "# HELP jq_c_total Counted.\n# TYPE jq_c_total counter\n"
        "jq_c_total{constraint=\"mail\",kind=\"rate\"} 0.25\n"
        "# HELP jq_none Nothing.\n# TYPE jq_none gauge\n");
}
