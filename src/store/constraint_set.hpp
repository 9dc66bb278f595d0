// A master's view of the constraints: an immutable snapshot (ConstraintSet) with its compiled
// matcher, and the cache that keeps the current snapshot in step with Redis (ConstraintCache).
//
// The push path reads `cache.current()->match(name, argument)`: one atomic load of a shared_ptr,
// then matching without any lock; a reload builds a whole new snapshot aside and swaps it in, so
// a push sees either the old constraints or the new ones, never a mix.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "api/constraint.hpp"
#include "api/job_matcher.hpp"
#include "common/expected.hpp"
#include "src/events/event.hpp"
#include "src/store/store_error.hpp"
#include "src/util/periodic.hpp"

namespace jq::store {

class ConstraintStore;

// The constraints a job matched, as the scripts keep them (R_CONSTRAINTS): a MessagePack array
// name1, key1, ...; empty for none.
std::string encode_matched(const std::vector<api::MatchedConstraint>& matched);

class ConstraintSet {
 public:
  ConstraintSet() = default;  // no constraints, version 0 (nothing loaded yet)
  // Sorted by name, so matches come out in name order.
  ConstraintSet(std::int64_t version, std::vector<api::Constraint> constraints);

  // The constraints_version the snapshot was read at.
  std::int64_t version() const { return version_; }
  const std::vector<api::Constraint>& constraints() const { return constraints_; }
  const api::Constraint* find(std::string_view name) const;  // null when there is none

  // The constraints a job matches and its key under each (api/job_matcher.hpp), in name order.
  std::vector<api::MatchedConstraint> match(std::string_view name,
                                            std::string_view argument) const {
    return matcher_.match(name, argument);
  }

 private:
  std::int64_t version_ = 0;
  std::vector<api::Constraint> constraints_;
  api::JobMatcher matcher_;
};

// Loads the constraints at start and again whenever they change: on a "c" event (any master's
// change, and the subscriber's made-up one after it reconnects, when events may have been
// missed), on changed() (this master's own change, without waiting for the event), and every
// kRecheck as a safety net. A reload that finds the version it already has keeps the snapshot.
class ConstraintCache {
 public:
  static constexpr std::chrono::seconds kRecheck{30};
  static constexpr std::chrono::seconds kRetry{1};  // after Redis did not answer
  // The same before the first load: pushes wait for it (load_first).
  static constexpr std::chrono::milliseconds kFirstRetry{100};

  ConstraintCache(asio::any_io_executor executor, ConstraintStore& store);

  void start();
  void stop();
  void on_event(const events::Event& event);  // any thread
  void changed();                             // any thread
  // Loads the constraints now (this master just changed them): a push after it sees the change.
  asio::awaitable<void> reload();
  // Loads them unless a load has already succeeded. A master that has just started must not
  // match a job against none while Redis holds constraints: that job would escape them for
  // good (a stored job is matched again only when the constraints change). The error when
  // Redis did not answer; the caller refuses its job then.
  asio::awaitable<Expected<void, StoreError>> load_first();

  // Never null; empty until the first load.
  std::shared_ptr<const ConstraintSet> current() const { return current_.load(); }
  bool loaded() const { return loaded_.load(); }

 private:
  asio::awaitable<Periodic::Duration> step();
  // Loads the definitions and installs them; false when Redis did not answer (logged).
  asio::awaitable<bool> load();
  asio::awaitable<Expected<void, StoreError>> fetch();  // the same, not logged
  // Makes `set`, read by the load numbered `load`, current unless a load started after it was
  // installed already (two loads may race): the newest load holds what Redis holds, also when
  // that is an older version (Redis lost its data, or was flushed).
  void install(ConstraintSet set, std::uint64_t load);

  ConstraintStore& store_;
  std::atomic<std::shared_ptr<const ConstraintSet>> current_;
  std::atomic<bool> loaded_{false};
  std::atomic<std::uint64_t> loads_started_{0};
  std::mutex install_mutex_;
  std::uint64_t installed_load_ = 0;  // under install_mutex_
  Periodic loop_;
};

}  // namespace jq::store
