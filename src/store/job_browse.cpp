// GET /v1/jobs: pages of the jobs in one state, in one order across every shard.
//
// Each shard lists its next `limit + 1` jobs after the cursor in the listing's order
// (lua/browseJobs-6.lua); merged, the first `limit` are the page, and one more means there is a
// next page, whose cursor is the page's last job. The order is a total one, (score, member,
// shard), so a cursor names one place in it whatever moves meanwhile. A shard whose scan ran out
// of budget first says where it stopped: the page ends there (it may be short, even empty) and
// the next one starts there, so that a job is never skipped for later ones of other shards.
#include <algorithm>
#include <tuple>

#include "src/redis/bindings/browse_jobs.hpp"
#include "src/store/queue_store.hpp"

namespace jq::store {
namespace {

using redis::bindings::BrowseJobs;

struct Listed {
  int shard = 0;
  BrowseJobs::Entry entry;
};

// A place in the listing: (score, member, shard).
using Place = std::tuple<std::int64_t, const std::string&, int>;
Place place_of(const Listed& l) {
  return {l.entry.score, l.entry.member, l.shard};
}
Place place_of(const BrowseJobs::Cursor& c) {
  return {c.score, c.member, c.shard};
}

}  // namespace

asio::awaitable<Expected<BrowsePage, StoreError>> QueueStore::browse(api::JobBrowse query) {
  std::optional<BrowseJobs::Cursor> after;
  if (query.after)
    after = BrowseJobs::Cursor{query.after->score, query.after->member, query.after->shard};
  std::vector<redis::ScriptCall> calls;
  calls.reserve(static_cast<std::size_t>(shards_));
  for (int shard = 0; shard < shards_; ++shard) {
    calls.push_back(BrowseJobs::call(
        BrowseJobs::keys(keys_, shard),
        {std::string(api::to_string(query.state)), query.name, query.limit + 1, shard, after}));
  }
  std::vector<Command> no_commands;  // named: g++ 12 mangles braced lists in co_await
  auto replies = co_await eval_all(std::move(calls), std::move(no_commands));
  if (!replies) co_return unexpected(std::move(replies.error()));

  const bool newest_first = query.state == api::BrowseState::dead;
  // Whether place a comes before b in the listing's order.
  const auto before = [newest_first](const Place& a, const Place& b) {
    return newest_first ? b < a : a < b;
  };
  std::vector<Listed> listed;
  // The earliest place where a shard's scan stopped short (its budget): nothing after it is
  // listed on this page, as that shard may have jobs before it that no scan looked at yet.
  std::optional<BrowseJobs::Cursor> cut;
  for (int shard = 0; shard < shards_; ++shard) {
    auto page = BrowseJobs::decode((*replies)[static_cast<std::size_t>(shard)], shard);
    if (!page) co_return unexpected(StoreError::bad_reply(page.error()));
    for (auto& e : page->entries) listed.push_back(Listed{shard, std::move(e)});
    auto& r = page->reached;
    // Never before where the page began (a ready list out of stamp order): no progress there.
    if (!r || (after && !before(place_of(*after), place_of(*r)))) continue;
    if (!cut || before(place_of(*r), place_of(*cut))) cut = std::move(*r);
  }
  std::sort(listed.begin(), listed.end(),
            [&](const Listed& a, const Listed& b) { return before(place_of(a), place_of(b)); });
  if (cut) {
    std::erase_if(listed, [&](const Listed& l) { return before(place_of(*cut), place_of(l)); });
  }

  BrowsePage page;
  const auto limit = static_cast<std::size_t>(query.limit);
  for (std::size_t i = 0; i < listed.size() && i < limit; ++i) {
    Listed& l = listed[i];
    auto record = decode_record(l.entry.record);
    if (!record) {
      co_return unexpected(StoreError::bad_reply("browseJobs (record)",
                                                 (*replies)[static_cast<std::size_t>(l.shard)]));
    }
    // A queued job's member is its ready stamp and then its field.
    std::string field =
        query.state == api::BrowseState::queued ? l.entry.member.substr(9) : l.entry.member;
    page.jobs.push_back(BrowsedJob{JobId{l.shard, std::move(field)}, std::move(*record)});
  }
  if (listed.size() > limit) {
    const Listed& last = listed[limit - 1];
    page.next = api::BrowseCursor{query.state, last.entry.score, last.shard, last.entry.member};
  } else if (cut) {
    // Short (or empty) but not the last: the next page goes on from where the scan stopped.
    page.next = api::BrowseCursor{query.state, cut->score, cut->shard, std::move(cut->member)};
  }
  co_return page;
}

}  // namespace jq::store
