// GET /v1/jobs: pages of the jobs in one state, in one order across every shard.
//
// Each shard lists its next `limit + 1` jobs after the cursor in the listing's order
// (lua/browseJobs-6.lua); merged, the first `limit` are the page, and one more means there is a
// next page, whose cursor is the page's last job. The order is a total one, (score, member,
// shard), so a cursor names one place in it whatever moves meanwhile.
#include <algorithm>

#include "src/redis/bindings/browse_jobs.hpp"
#include "src/store/queue_store.hpp"

namespace jq::store {
namespace {

using redis::bindings::BrowseJobs;

struct Listed {
  int shard = 0;
  BrowseJobs::Entry entry;
};

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

  std::vector<Listed> listed;
  for (int shard = 0; shard < shards_; ++shard) {
    auto entries = BrowseJobs::decode((*replies)[static_cast<std::size_t>(shard)]);
    if (!entries) co_return unexpected(StoreError::bad_reply(entries.error()));
    for (auto& e : *entries) listed.push_back(Listed{shard, std::move(e)});
  }
  const bool newest_first = query.state == api::BrowseState::dead;
  std::sort(listed.begin(), listed.end(), [newest_first](const Listed& a, const Listed& b) {
    const auto ka = std::tie(a.entry.score, a.entry.member, a.shard);
    const auto kb = std::tie(b.entry.score, b.entry.member, b.shard);
    return newest_first ? kb < ka : ka < kb;
  });

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
  }
  co_return page;
}

}  // namespace jq::store
