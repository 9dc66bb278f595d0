#include "src/scheduler/names_with_work.hpp"

#include <algorithm>
#include <unordered_set>
#include <utility>

namespace jq::scheduler {

void NamesWithWork::set(const std::string& name, bool may_have_work) {
  if (may_have_work == work_.contains(name)) return;
  if (may_have_work) {
    work_.insert(name);
  } else {
    work_.erase(name);
  }
  const auto it = serving_.find(name);
  if (it == serving_.end()) return;
  for (std::size_t i : it->second) {
    if (may_have_work) {
      ++named_[i].count;
    } else {
      --named_[i].count;
    }
  }
}

void NamesWithWork::endpoints(std::vector<std::shared_ptr<const workers::Endpoint>> all) {
  named_.clear();
  serving_.clear();
  index_.clear();
  all_names_ = false;
  for (auto& endpoint : all) {
    if (endpoint->all_names) {
      all_names_ = true;  // counted by work_.size()
      continue;
    }
    const std::size_t i = named_.size();
    Named n{std::move(endpoint), 0};
    std::unordered_set<std::string_view> seen;  // a name listed twice counts once
    for (const std::string& name : n.endpoint->names) {
      if (!seen.insert(name).second) continue;
      serving_[name].push_back(i);
      if (work_.contains(name)) ++n.count;
    }
    index_.emplace(n.endpoint.get(), i);
    named_.push_back(std::move(n));
  }
}

std::size_t NamesWithWork::count(const workers::Endpoint& endpoint) const {
  if (endpoint.all_names) return work_.size();
  if (const auto it = index_.find(&endpoint); it != index_.end()) return named_[it->second].count;
  return names(endpoint).size();  // not registered here (yet): counted the long way
}

std::vector<std::string> NamesWithWork::names(const workers::Endpoint& endpoint) const {
  if (endpoint.all_names) return {work_.begin(), work_.end()};
  std::vector<std::string> out;
  for (const std::string& name : endpoint.names) {
    if (work_.contains(name)) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::string> NamesWithWork::served(const std::set<std::string>& known,
                                               const std::set<std::string>& paused) const {
  std::vector<std::string> out;
  const auto keep = [&](const std::string& name) {
    if (!paused.contains(name)) out.push_back(name);
  };
  if (all_names_) {
    for (const std::string& name : known) keep(name);
    return out;
  }
  for (const auto& [name, endpoints] : serving_) {
    if (known.contains(name)) keep(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace jq::scheduler
