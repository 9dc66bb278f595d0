#include "src/store/reclassifier.hpp"

#include "src/redis/bindings/reclassify_jobs.hpp"
#include "src/store/job_record.hpp"

namespace jq::store {
namespace {

using redis::bindings::ReclassifyJobs;

constexpr const char* kScanPage = "200";  // record buckets per SCAN page (62 jobs each at most)

// Whether a job's stored constraints (name1, key1, ...) are the ones it matches now.
bool same_constraints(const std::vector<api::MatchedConstraint>& matched,
                      const std::vector<std::string>& stored) {
  if (stored.size() != matched.size() * 2) return false;
  for (std::size_t i = 0; i < matched.size(); ++i) {
    if (matched[i].constraint != stored[2 * i] || matched[i].key != stored[2 * i + 1]) {
      return false;
    }
  }
  return true;
}

}  // namespace

Reclassifier::Reclassifier(redis::Client& redis, redis::Keys keys, int shards)
    : redis_(redis), keys_(std::move(keys)), shards_(shards) {}

asio::awaitable<Expected<std::int64_t, StoreError>> Reclassifier::run(const ConstraintSet& set) {
  std::int64_t changed = 0;
  for (int shard = 0; shard < shards_; ++shard) {
    auto n = co_await run_shard(set, shard);
    if (!n) co_return unexpected(std::move(n.error()));
    changed += *n;
  }
  co_return changed;
}

asio::awaitable<Expected<std::int64_t, StoreError>> Reclassifier::run_shard(
    const ConstraintSet& set, int shard) {
  const std::string prefix = keys_.jobs_prefix(shard);
  std::int64_t changed = 0;
  std::string cursor = "0";
  do {
    std::vector<std::string> scan = {"SCAN", cursor, "MATCH", prefix + "*", "COUNT", kScanPage};
    auto page = co_await redis_.command(std::move(scan));
    if (!page) co_return unexpected(StoreError::unavailable(page.error()));
    if (!page->is_array() || page->elements.size() != 2 || !page->elements[1].is_array()) {
      co_return unexpected(StoreError::internal("SCAN answered an unexpected shape"));
    }
    cursor = page->elements[0].str;
    std::vector<std::vector<std::string>> reads;
    std::vector<std::string> buckets;
    for (const redis::Reply& key : page->elements[1].elements) {
      buckets.push_back(key.str);
      reads.push_back({"HGETALL", key.str});
    }
    if (reads.empty()) continue;
    auto contents = co_await redis_.pipeline(std::move(reads));
    if (!contents) co_return unexpected(StoreError::unavailable(contents.error()));
    ReclassifyJobs::Args args{shard, {}};
    for (std::size_t b = 0; b < buckets.size() && b < contents->elements.size(); ++b) {
      // A bucket that could not be read (an ACL without its keys, a node that lost its slot) is
      // not a bucket without jobs to match again: the pass fails, and goes again.
      if (contents->elements[b].is_error()) {
        co_return unexpected(StoreError::internal("reading " + buckets[b] +
                                                  " answered: " + contents->elements[b].str));
      }
      const std::string bucket_id = buckets[b].substr(prefix.size());
      const auto& flat = contents->elements[b].elements;
      for (std::size_t i = 0; i + 1 < flat.size(); i += 2) {
        auto record = decode_record(flat[i + 1].str);
        if (!record ||
            (record->state != JobState::queued && record->state != JobState::scheduled)) {
          continue;
        }
        const auto matched = set.match(record->name, match_argument(*record));
        if (same_constraints(matched, record->constraints)) continue;
        args.jobs.push_back(
            ReclassifyJobs::Job{bucket_id + flat[i].str, flat[i + 1].str, encode_matched(matched)});
      }
    }
    if (args.jobs.empty()) continue;
    redis::ScriptCall call =
        ReclassifyJobs::call(ReclassifyJobs::keys(keys_, shard), std::move(args));
    auto reply = co_await redis_.eval(std::move(call));
    if (!reply) co_return unexpected(StoreError::unavailable(reply.error()));
    auto n = ReclassifyJobs::decode(*reply);
    if (!n) co_return unexpected(StoreError::bad_reply(n.error()));
    changed += *n;
  } while (cursor != "0");
  co_return changed;
}

}  // namespace jq::store
