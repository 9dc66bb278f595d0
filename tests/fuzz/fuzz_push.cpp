// POST /v1/jobs bodies: one job or a batch, in MessagePack or JSON (the first byte chooses).
// A refusal always names what is wrong; an accepted batch holds 1-1000 valid jobs, whose delay,
// unique_for and keys are within the contract's ranges, never delay with run_at, and a merging
// on_duplicate only with unique_key, its claim ending at the start.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "api/job.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto type = data[0] % 2 ? jq::api::MediaType::json : jq::api::MediaType::msgpack;
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  const auto pushed = jq::api::decode_push(body, type, jq::api::JobDefaults{});
  if (!pushed) {
    if (pushed.error().message.empty()) std::abort();
    return 0;
  }
  if (pushed->jobs.empty() || pushed->jobs.size() > 1000) std::abort();
  using std::chrono::milliseconds;
  for (const auto& job : pushed->jobs) {
    if (job.name.empty() || job.name.size() > 128 || job.argument.empty()) std::abort();
    const auto delay = job.ready_at.delay;
    if (delay < milliseconds(0) || delay > milliseconds(31'536'000'000)) std::abort();
    if (delay > milliseconds(0) && job.ready_at.run_at_ms) std::abort();
    if (job.unique_for <= milliseconds(0) || job.unique_for > milliseconds(31'536'000'000)) {
      std::abort();
    }
    if (job.unique_key.size() > 256 || job.ordering_key.size() > 256) std::abort();
    // A merging push is unique, and its claim ends when the job starts.
    if (job.on_duplicate != jq::api::OnDuplicate::keep &&
        (job.unique_key.empty() || job.unique_until != jq::api::UniqueUntil::started)) {
      std::abort();
    }
  }
  return 0;
}
