#include "src/metrics/registry.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace jq::metrics {
namespace {

void check_bounds(const std::vector<double>& bounds, const std::string& name) {
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    if (!std::isfinite(bounds[i]) || (i > 0 && bounds[i] <= bounds[i - 1])) {
      throw std::invalid_argument(name + ": bucket bounds must be finite and ascending");
    }
  }
}

void expose_child(std::string& out, const Desc& desc, const LabelValues& values, const Counter& c) {
  write_sample(out, desc.name, desc.label_names, values, static_cast<double>(c.value()));
}

void expose_child(std::string& out, const Desc& desc, const LabelValues& values, const Gauge& g) {
  write_sample(out, desc.name, desc.label_names, values, g.value());
}

}  // namespace

Histogram::Histogram(std::span<const double> bounds)
    : bounds_(bounds), counts_(std::make_unique<std::atomic<std::uint64_t>[]>(bounds.size() + 1)) {}

void Histogram::observe(double value) {
  // Bounds are inclusive upper bounds ("le"): the first one not below the value takes it.
  const auto it = std::lower_bound(bounds_.begin(), bounds_.end(), value);
  counts_[static_cast<std::size_t>(it - bounds_.begin())].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::snapshot() const {
  Snapshot s;
  s.cumulative.reserve(bounds_.size() + 1);
  std::uint64_t running = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i) {
    running += counts_[i].load(std::memory_order_relaxed);
    s.cumulative.push_back(running);
  }
  s.sum = sum_.load(std::memory_order_relaxed);
  return s;
}

template <class Metric>
Family<Metric>::Family(Desc desc, std::vector<double> bounds)
    : FamilyBase(std::move(desc)), bounds_(std::move(bounds)) {
  check_bounds(bounds_, desc_.name);
  // A family without labels has exactly one child: make it now, so it is exposed from the start.
  if (desc_.label_names.empty()) children_.emplace(LabelValues{}, make());
}

template <class Metric>
std::unique_ptr<Metric> Family<Metric>::make() const {
  if constexpr (std::is_same_v<Metric, Histogram>) {
    return std::make_unique<Histogram>(bounds_);
  } else {
    return std::make_unique<Metric>();
  }
}

template <class Metric>
Metric& Family<Metric>::with(const LabelValues& values) {
  if (values.size() != desc_.label_names.size()) {
    throw std::invalid_argument(desc_.name + ": expected " +
                                std::to_string(desc_.label_names.size()) + " label values, got " +
                                std::to_string(values.size()));
  }
  std::lock_guard lock(mutex_);
  auto it = children_.find(values);
  if (it == children_.end()) it = children_.emplace(values, make()).first;
  return *it->second;
}

template <class Metric>
void Family<Metric>::expose(std::string& out) const {
  write_header(out, desc_);
  std::lock_guard lock(mutex_);
  for (const auto& [values, child] : children_) {
    if constexpr (std::is_same_v<Metric, Histogram>) {
      const Histogram::Snapshot s = child->snapshot();
      const std::string bucket = desc_.name + "_bucket";
      for (std::size_t i = 0; i < s.cumulative.size(); ++i) {
        const std::string le = i < bounds_.size() ? format_value(bounds_[i]) : "+Inf";
        write_sample(out, bucket, desc_.label_names, values, static_cast<double>(s.cumulative[i]),
                     {"le", le});
      }
      write_sample(out, desc_.name + "_sum", desc_.label_names, values, s.sum);
      write_sample(out, desc_.name + "_count", desc_.label_names, values,
                   static_cast<double>(s.count()));
    } else {
      expose_child(out, desc_, values, *child);
    }
  }
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

Family<Counter>& Registry::counter(std::string name, std::string help,
                                   std::vector<std::string> label_names) {
  return add<Counter>(
      Desc{std::move(name), std::move(help), Type::counter, std::move(label_names)});
}

Family<Gauge>& Registry::gauge(std::string name, std::string help,
                               std::vector<std::string> label_names) {
  return add<Gauge>(Desc{std::move(name), std::move(help), Type::gauge, std::move(label_names)});
}

Family<Histogram>& Registry::histogram(std::string name, std::string help,
                                       std::vector<double> bounds,
                                       std::vector<std::string> label_names) {
  return add<Histogram>(
      Desc{std::move(name), std::move(help), Type::histogram, std::move(label_names)},
      std::move(bounds));
}

template <class Metric>
Family<Metric>& Registry::add(Desc desc, std::vector<double> bounds) {
  auto family = std::make_unique<Family<Metric>>(std::move(desc), std::move(bounds));
  auto& ref = *family;
  families_.push_back(std::move(family));
  return ref;
}

void Registry::expose(std::string& out) const {
  for (const auto& family : families_) family->expose(out);
}

}  // namespace jq::metrics
