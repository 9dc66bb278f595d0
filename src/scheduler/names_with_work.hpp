// Which job names may have jobs for a worker now, and for each endpoint how many of the names
// it serves do. A name may have work while this master knows it (it was pushed), its queue is
// not paused, and not every shard of it is known to be empty (QueueHeads::known_empty); the
// scheduler calls set() whenever one of those changes.
//
// An endpoint none of whose names may have work can take a pushed job at once (a claim), and a
// pass has nothing to reserve for it. Both are asked of every endpoint after every claim, settle
// and pass: walking every name the master knows each time, and every name an endpoint serves
// for each, made a master with 100 endpoints of three names each and 300 names spend over a
// millisecond of CPU per job at 2,000 jobs/s (docs/BENCHMARKS.md). Here each question is one
// lookup, and a change of a name costs a step per endpoint serving it by name.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "src/workers/endpoint.hpp"

namespace jq::scheduler {

class NamesWithWork {
 public:
  // Whether `name` may have work now.
  void set(const std::string& name, bool may_have_work);
  // The endpoints as registered now; counts are taken again. Kept until the next call.
  void endpoints(std::vector<std::shared_ptr<const workers::Endpoint>> all);
  // How many of the names `endpoint` serves may have work.
  std::size_t count(const workers::Endpoint& endpoint) const;
  // Those names, in order.
  std::vector<std::string> names(const workers::Endpoint& endpoint) const;
  // The names some endpoint serves among `known`, `paused` ones left out, in order.
  std::vector<std::string> served(const std::set<std::string>& known,
                                  const std::set<std::string>& paused) const;

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view name) const {
      return std::hash<std::string_view>{}(name);
    }
  };
  // An endpoint registered for names (not "*") and how many of them may have work.
  struct Named {
    std::shared_ptr<const workers::Endpoint> endpoint;
    std::size_t count = 0;
  };

  std::set<std::string, std::less<>> work_;  // the names that may have work
  std::vector<Named> named_;
  // By name, the endpoints in named_ that serve it (each once).
  std::unordered_map<std::string, std::vector<std::size_t>, Hash, std::equal_to<>> serving_;
  std::unordered_map<const workers::Endpoint*, std::size_t> index_;  // into named_
  bool all_names_ = false;  // an endpoint is registered for "*"
};

}  // namespace jq::scheduler
