#include "src/store/admission.hpp"

#include <spdlog/spdlog.h>

#include "src/redis/bindings/admit_jobs.hpp"
#include "src/redis/bindings/hold_jobs.hpp"
#include "src/store/attempt_lease.hpp"

namespace jq::store {

using redis::ScriptCall;
using redis::bindings::AdmitJobs;
using redis::bindings::HoldJobs;

Admission::Admission(redis::Client& redis, const redis::Keys& keys) : redis_(redis), keys_(keys) {}

asio::awaitable<std::vector<ReservedJob>> Admission::admit(int shard, std::int64_t now_ms,
                                                           std::vector<ReservedJob> jobs) {
  std::vector<std::size_t> candidates;
  AdmitJobs::Args args{now_ms, {}};
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const ReservedJob& job = jobs[i];
    auto lease = attempt_lease(job.id, job.record->attempts, job.record->constraints);
    if (!lease) continue;
    candidates.push_back(i);
    args.jobs.push_back(AdmitJobs::Job{shard, std::move(lease->lease), job.record->ready_stamp,
                                       job.deadline_ms, std::move(lease->constraints)});
  }
  if (candidates.empty()) co_return jobs;

  ScriptCall call = AdmitJobs::call(AdmitJobs::keys(keys_), std::move(args));
  auto reply = co_await redis_.eval(std::move(call));
  std::vector<std::int64_t> answers;  // empty: no answer
  if (!reply) {
    spdlog::warn(
        "constraints of {} reserved jobs could not be checked ({}); they run again "
        "after their deadline",
        candidates.size(), reply.error().message());
  } else if (auto decoded = AdmitJobs::decode(*reply, candidates.size()); !decoded) {
    spdlog::warn(
        "constraints of {} reserved jobs could not be checked ({}); they run again "
        "after their deadline",
        candidates.size(), decoded.error().message());
  } else {
    answers = std::move(*decoded);
  }
  std::vector<bool> stays(jobs.size(), true);
  HoldJobs::Args holds;
  for (std::size_t c = 0; c < candidates.size(); ++c) {
    ReservedJob& job = jobs[candidates[c]];
    const std::int64_t refused = answers.empty() ? -1 : answers[c];
    const auto pair = 2 * static_cast<std::size_t>(std::max<std::int64_t>(refused - 1, 0));
    if (refused > 0 && pair + 1 < job.record->constraints.size()) {
      stays[candidates[c]] = false;
      holds.jobs.push_back(HoldJobs::Job{job.id.field, job.record->attempts,
                                         job.record->constraints[pair],
                                         job.record->constraints[pair + 1]});
    } else if (refused == 0) {
      // Admitted: a unique claim kept until the job starts goes now (holdJobs looks: only
      // unique_until started). At any attempt: a candidate whose admission was lost is reaped
      // and comes back still holding it.
      if (!job.record->unique_key.empty()) {
        holds.jobs.push_back(HoldJobs::Job{job.id.field, job.record->attempts, {}, {}});
      }
    } else {
      stays[candidates[c]] = false;  // not admitted and not held: left to the reaper
    }
  }
  if (!holds.jobs.empty()) {
    const std::size_t sent = holds.jobs.size();
    ScriptCall hold = HoldJobs::call(HoldJobs::keys(keys_, shard), std::move(holds));
    auto held = co_await redis_.eval(std::move(hold));
    if (!held) {
      spdlog::warn(
          "jobs refused by their constraints could not be held ({}); they run again "
          "after their deadline",
          held.error().message());
    } else if (auto statuses = HoldJobs::decode(*held, sent); !statuses) {
      spdlog::warn("holding jobs refused by their constraints: {}", statuses.error().message());
    }
  }
  std::vector<ReservedJob> out;
  out.reserve(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (stays[i]) out.push_back(std::move(jobs[i]));
  }
  co_return out;
}

}  // namespace jq::store
