#include "src/store/constraint_set.hpp"

#include <algorithm>
#include <charconv>

#include <spdlog/spdlog.h>
#include <msgpack.hpp>

#include "src/store/constraint_store.hpp"

namespace jq::store {

std::string encode_matched(const std::vector<api::MatchedConstraint>& matched) {
  if (matched.empty()) return {};
  msgpack::sbuffer out;
  msgpack::packer<msgpack::sbuffer> pk(out);
  pk.pack_array(static_cast<std::uint32_t>(matched.size() * 2));
  for (const api::MatchedConstraint& m : matched) {
    pk.pack(m.constraint);
    pk.pack(m.key);
  }
  return std::string(out.data(), out.size());
}

namespace {

std::vector<api::Constraint> sorted(std::vector<api::Constraint> constraints) {
  std::sort(constraints.begin(), constraints.end(),
            [](const api::Constraint& a, const api::Constraint& b) { return a.name < b.name; });
  return constraints;
}

}  // namespace

ConstraintSet::ConstraintSet(std::int64_t version, std::vector<api::Constraint> constraints)
    : version_(version), constraints_(sorted(std::move(constraints))), matcher_(constraints_) {}

const api::Constraint* ConstraintSet::find(std::string_view name) const {
  const auto it =
      std::lower_bound(constraints_.begin(), constraints_.end(), name,
                       [](const api::Constraint& c, std::string_view n) { return c.name < n; });
  return it != constraints_.end() && it->name == name ? &*it : nullptr;
}

ConstraintCache::ConstraintCache(asio::any_io_executor executor, ConstraintStore& store)
    : store_(store),
      current_(std::make_shared<const ConstraintSet>()),
      loop_(std::move(executor), "constraints", [this] { return step(); }) {}

void ConstraintCache::start() {
  loop_.start();
}

void ConstraintCache::stop() {
  loop_.stop();
}

// "c <version>": nothing to do when this master has that version already (its own change, read
// back by changed()); "c" alone (after a reconnect) always reloads.
void ConstraintCache::on_event(const events::Event& event) {
  if (event.kind != events::EventKind::constraints) return;
  std::int64_t version = 0;
  const char* end = event.arg.data() + event.arg.size();
  const auto [at, ec] = std::from_chars(event.arg.data(), end, version);
  if (ec == std::errc() && at == end && version == current()->version() && loaded()) return;
  loop_.poke();
}

void ConstraintCache::changed() {
  loop_.poke();
}

asio::awaitable<Periodic::Duration> ConstraintCache::step() {
  const Periodic::Duration retry = loaded() ? Periodic::Duration(kRetry) : kFirstRetry;
  auto version = co_await store_.version();
  if (!version) co_return retry;
  if (loaded() && *version == current()->version()) co_return kRecheck;
  const bool loaded_now = co_await load();  // not inside ?: (g++ 12 miscompiles that)
  co_return loaded_now ? Periodic::Duration(kRecheck) : retry;
}

asio::awaitable<void> ConstraintCache::reload() {
  const bool loaded_now = co_await load();
  if (!loaded_now) loop_.poke();  // the loop retries
}

asio::awaitable<Expected<void, StoreError>> ConstraintCache::load_first() {
  if (loaded()) co_return Expected<void, StoreError>{};
  auto fetched = co_await fetch();
  if (fetched) co_return fetched;
  StoreError error = std::move(fetched.error());
  error.message =
      "this master has just started and has not read the constraints yet, which "
      "every job is matched against: " +
      error.message;
  co_return unexpected(std::move(error));
}

asio::awaitable<bool> ConstraintCache::load() {
  auto fetched = co_await fetch();
  if (!fetched) {
    spdlog::warn("constraints: cannot load them ({}); retrying", fetched.error().message);
    co_return false;
  }
  co_return true;
}

asio::awaitable<Expected<void, StoreError>> ConstraintCache::fetch() {
  const std::uint64_t number = ++loads_started_;
  auto set = co_await store_.load();
  if (!set) co_return unexpected(std::move(set.error()));
  install(std::move(*set), number);
  co_return Expected<void, StoreError>{};
}

void ConstraintCache::install(ConstraintSet set, std::uint64_t load) {
  std::lock_guard lock(install_mutex_);
  if (load < installed_load_) return;
  installed_load_ = load;
  const auto now = current_.load();
  if (loaded_.load() && now->version() == set.version()) return;  // the same: keep the snapshot
  if (loaded_.load() && set.version() < now->version()) {
    spdlog::warn(
        "constraints: Redis holds version {} where this master had {} (did Redis lose its data or "
        "was it flushed?); using what Redis holds",
        set.version(), now->version());
  }
  auto next = std::make_shared<const ConstraintSet>(std::move(set));
  current_.store(next);
  loaded_.store(true);
  spdlog::info("constraints: {} loaded (version {})", next->constraints().size(), next->version());
}

}  // namespace jq::store
