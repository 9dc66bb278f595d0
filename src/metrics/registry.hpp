// A small metrics registry: counters, gauges and histograms with fixed buckets, grouped in
// families by label values, written in the Prometheus text format.
//
// Cost model: a child (one label-value combination) is found or made once under its family's
// mutex; the caller keeps the reference, which stays valid for the registry's life, and every
// later increment is a relaxed atomic operation with no lookup and no formatting. Children are
// never removed, so label values must come from a bounded set (see capped_labels.hpp).
//
// Families are registered while the program is being wired, before other threads use the
// registry; children may be added from any thread at any time.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "src/metrics/exposition.hpp"

namespace jq::metrics {

class Counter {
 public:
  void inc(std::uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  std::uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> value_{0};
};

class Gauge {
 public:
  void set(double value) { value_.store(value, std::memory_order_relaxed); }
  void add(double delta) { value_.fetch_add(delta, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// Observations counted in buckets with fixed upper bounds (ascending; +Inf is implied). Each
// bucket counts only its own observations; the exposition makes them cumulative. Read while
// observations go on, a snapshot may show one observation in its bucket but not yet in the sum.
class Histogram {
 public:
  explicit Histogram(std::span<const double> bounds);

  void observe(double value);

  struct Snapshot {
    std::vector<std::uint64_t> cumulative;  // one per bound, then +Inf (== count)
    double sum = 0;
    std::uint64_t count() const { return cumulative.empty() ? 0 : cumulative.back(); }
  };
  Snapshot snapshot() const;

 private:
  std::span<const double> bounds_;  // owned by the family
  std::unique_ptr<std::atomic<std::uint64_t>[]> counts_;
  std::atomic<double> sum_{0};
};

class FamilyBase {
 public:
  explicit FamilyBase(Desc desc) : desc_(std::move(desc)) {}
  virtual ~FamilyBase() = default;
  virtual void expose(std::string& out) const = 0;

 protected:
  Desc desc_;
};

// One metric name and its children by label values. `with` throws std::invalid_argument when
// the number of values is not the number of label names (a bug in the caller).
template <class Metric>
class Family final : public FamilyBase {
 public:
  Family(Desc desc, std::vector<double> bounds = {});

  Metric& with(const LabelValues& values);
  Metric& only() { return with({}); }  // the child of a family without labels
  void expose(std::string& out) const override;

 private:
  std::unique_ptr<Metric> make() const;

  std::vector<double> bounds_;  // histograms only
  mutable std::mutex mutex_;
  std::map<LabelValues, std::unique_ptr<Metric>> children_;  // sorted: stable output
};

class Registry {
 public:
  Family<Counter>& counter(std::string name, std::string help,
                           std::vector<std::string> label_names = {});
  Family<Gauge>& gauge(std::string name, std::string help,
                       std::vector<std::string> label_names = {});
  Family<Histogram>& histogram(std::string name, std::string help, std::vector<double> bounds,
                               std::vector<std::string> label_names = {});

  // Every family in the order registered, each with its children in label order.
  void expose(std::string& out) const;

 private:
  template <class Metric>
  Family<Metric>& add(Desc desc, std::vector<double> bounds = {});

  std::vector<std::unique_ptr<FamilyBase>> families_;
};

extern template class Family<Counter>;
extern template class Family<Gauge>;
extern template class Family<Histogram>;

}  // namespace jq::metrics
