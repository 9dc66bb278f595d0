#include "src/scheduler/promoter.hpp"

#include <charconv>

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

namespace jq::scheduler {
namespace {

using std::chrono::milliseconds;

constexpr int kPromoteBatch = 1000;
// A net for events missed while the subscriber reconnects; the due times are what drive it.
constexpr milliseconds kMaxSleep{5000};

}  // namespace

Promoter::Promoter(asio::io_context& io, redis::Client& redis, store::DispatchStore& store)
    : strand_(asio::make_strand(io.get_executor())),
      redis_(redis),
      store_(store),
      wakeup_(strand_) {}

void Promoter::start() {
  asio::co_spawn(strand_, run(), asio::detached);
}

void Promoter::stop() {
  asio::post(strand_, [this] { stopping_ = true; });
  wakeup_.notify();
}

void Promoter::on_event(const events::Event& event) {
  if (event.kind != events::EventKind::scheduled) return;
  std::int64_t due = 0;
  std::from_chars(event.arg.data(), event.arg.data() + event.arg.size(), due);
  asio::post(strand_, [this, due] {
    if (next_due_ms_ == 0 || due < next_due_ms_) {
      next_due_ms_ = due;
      wakeup_.notify();
    }
  });
}

asio::awaitable<void> Promoter::run() {
  while (!stopping_) {
    milliseconds sleep = kMaxSleep;
    if (redis_.ready() && store_.now_ms() >= next_due_ms_) {
      std::int64_t next = 0;
      bool ok = true;
      for (int shard = 0; shard < store_.shards(); ++shard) {
        // Keep promoting a shard while it has a full batch due.
        for (;;) {
          auto r = co_await store_.promote(shard, kPromoteBatch);
          if (!r) {
            ok = false;
            break;
          }
          if (r->next_due_ms && (next == 0 || *r->next_due_ms < next)) next = *r->next_due_ms;
          if (r->promoted < kPromoteBatch ||
              (r->next_due_ms && *r->next_due_ms > store_.now_ms())) {
            break;
          }
        }
      }
      next_due_ms_ = ok ? next : 0;
    }
    if (next_due_ms_ > 0) {
      sleep =
          std::min(sleep, milliseconds(std::max<std::int64_t>(0, next_due_ms_ - store_.now_ms())));
    } else if (!redis_.ready()) {
      sleep = milliseconds(200);
    }
    co_await wakeup_.wait(sleep);
  }
}

}  // namespace jq::scheduler
