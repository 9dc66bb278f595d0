// Children for label values that come from outside (job names, worker URLs), with a cap on how
// many distinct values get their own: the first `cap` values seen keep theirs for the process's
// life, every later one shares the `_other` bundle. That keeps a registry's size bounded however
// many names pushers invent.
//
// A Bundle is whatever the caller wants per value, usually a struct of references to registry
// children (e.g. one job name's counters), made once by `make(label)` and then reused: looking a
// value up takes a shared lock and a hash, never a string allocation.
//
// Known limit: a value spelled "_other" shares the folded values' bundle.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace jq::metrics {

inline constexpr std::string_view kOtherLabel = "_other";

template <class Bundle>
class CappedLabels {
 public:
  using Make = std::function<Bundle(const std::string& label)>;

  CappedLabels(std::size_t cap, Make make) : cap_(cap), make_(std::move(make)) {}

  // The bundle of `value`: its own once it has one or while fewer than `cap` values have one,
  // else the shared `_other` bundle (made on the first value folded).
  const Bundle& get(std::string_view value) { return *find(value).first; }

  // True when `value` has (or, the cap allowing, now gets) its own bundle.
  bool admits(std::string_view value) { return find(value).second; }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  // The bundle and whether it is the value's own.
  std::pair<const Bundle*, bool> find(std::string_view value) {
    {
      std::shared_lock lock(mutex_);
      if (auto it = own_.find(value); it != own_.end()) return {it->second.get(), true};
      if (other_ && own_.size() >= cap_) return {other_.get(), false};
    }
    std::unique_lock lock(mutex_);
    if (auto it = own_.find(value); it != own_.end()) return {it->second.get(), true};
    if (own_.size() < cap_ && value != kOtherLabel) {
      std::string label(value);
      auto bundle = std::make_unique<Bundle>(make_(label));
      return {own_.emplace(std::move(label), std::move(bundle)).first->second.get(), true};
    }
    if (!other_) other_ = std::make_unique<Bundle>(make_(std::string(kOtherLabel)));
    return {other_.get(), false};
  }

  std::size_t cap_;
  Make make_;
  std::shared_mutex mutex_;
  std::unordered_map<std::string, std::unique_ptr<Bundle>, Hash, std::equal_to<>> own_;
  std::unique_ptr<Bundle> other_;
};

}  // namespace jq::metrics
