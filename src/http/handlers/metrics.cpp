#include "src/http/handlers/metrics.hpp"

#include <chrono>
#include <string_view>
#include <vector>

#include <spdlog/spdlog.h>

namespace jq::http {
namespace {

using metrics::Desc;
using metrics::ScrapedSample;
using metrics::Type;

// One gauge per field of a queue's counts.
struct QueueGauge {
  std::string_view name;
  std::string_view help;
  double (*value)(const store::QueueInfo& q);
};

constexpr QueueGauge kQueueGauges[] = {
    {"jq_queue_ready", "Jobs ready to run (never run, or due for retry), all shards.",
     [](const store::QueueInfo& q) { return static_cast<double>(q.ready); }},
    {"jq_queue_scheduled", "Jobs waiting for a retry's backoff.",
     [](const store::QueueInfo& q) { return static_cast<double>(q.scheduled); }},
    {"jq_queue_running", "Jobs in flight on a worker, any master's.",
     [](const store::QueueInfo& q) { return static_cast<double>(q.running); }},
    {"jq_queue_dead", "Jobs that failed for good and are kept in the dead set.",
     [](const store::QueueInfo& q) { return static_cast<double>(q.dead); }},
    {"jq_queue_lag_seconds", "Age of the oldest ready job (0 when none is ready).",
     [](const store::QueueInfo& q) { return q.lag_seconds; }},
};

Desc gauge_desc(std::string_view name, std::string_view help, std::string label) {
  return Desc{std::string(name), std::string(help), Type::gauge, {std::move(label)}};
}

// The counts of the queues whose names have their own label; empty when Redis does not answer.
asio::awaitable<std::vector<store::QueueInfo>> read_queues(metrics::Metrics& metrics,
                                                           store::QueueStore& queues) {
  auto names = co_await queues.names();
  if (!names) {
    spdlog::debug("metrics: queue names not read: {}", names.error().message);
    co_return std::vector<store::QueueInfo>();
  }
  std::vector<std::string> own;
  for (std::string& name : *names) {
    if (metrics.has_own_label(name)) own.push_back(std::move(name));
  }
  auto counts = co_await queues.counts(std::move(own));
  if (!counts) {
    spdlog::debug("metrics: queue counts not read: {}", counts.error().message);
    co_return std::vector<store::QueueInfo>();
  }
  co_return std::move(*counts);
}

// jq_worker_healthy of every registered endpoint with its own label (1 or 0). Asking whether an
// endpoint has its own label makes its in-flight and round-trip children, so an endpoint shows
// zeros before its first attempt.
asio::awaitable<std::vector<ScrapedSample>> read_worker_health(metrics::Metrics& metrics,
                                                               workers::WorkerStore& workers) {
  std::vector<ScrapedSample> samples;
  auto views = co_await workers.load_with_stats();
  if (!views) co_return samples;
  for (const auto& v : *views) {
    const std::string& url = v.endpoint.url;
    if (!metrics.worker_has_own_label(url)) continue;
    samples.push_back(ScrapedSample{{url}, v.stats.healthy ? 1.0 : 0.0});
  }
  co_return samples;
}

asio::awaitable<Response> scrape(metrics::Metrics& metrics, store::QueueStore& queues,
                                 workers::WorkerStore& workers) {
  const std::vector<store::QueueInfo> counts = co_await read_queues(metrics, queues);
  const std::vector<ScrapedSample> health = co_await read_worker_health(metrics, workers);
  Response r;
  r.content_type = std::string(metrics::kContentType);
  metrics.expose(r.body);
  for (const QueueGauge& gauge : kQueueGauges) {
    std::vector<ScrapedSample> samples;
    samples.reserve(counts.size());
    for (const store::QueueInfo& q : counts)
      samples.push_back(ScrapedSample{{q.name}, gauge.value(q)});
    metrics::write_scraped(r.body, gauge_desc(gauge.name, gauge.help, "name"), samples);
  }
  metrics::write_scraped(r.body,
                         gauge_desc("jq_worker_healthy",
                                    "1 when the worker endpoint is reachable, 0 while it is held "
                                    "off after a connection failure.",
                                    "worker"),
                         health);
  co_return r;
}

}  // namespace

void add_metrics_routes(Router& router, metrics::Metrics& metrics, store::QueueStore& queues,
                        workers::WorkerStore& workers) {
  router.add(Method::get, "/metrics",
             [&metrics, &queues, &workers](Request&) { return scrape(metrics, queues, workers); });
}

}  // namespace jq::http
