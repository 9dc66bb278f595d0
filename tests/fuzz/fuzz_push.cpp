// POST /v1/jobs bodies: one job or a batch, in MessagePack or JSON (the first byte chooses).
// A refusal always names what is wrong; an accepted batch holds 1-1000 valid jobs.
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
  for (const auto& job : pushed->jobs) {
    if (job.name.empty() || job.name.size() > 128 || job.argument.empty()) std::abort();
  }
  return 0;
}
