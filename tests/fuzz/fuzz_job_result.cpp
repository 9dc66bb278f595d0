// A worker's answer body, MessagePack or JSON (the first byte chooses): decoded or refused with
// a reason, never a crash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "api/job_result.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto type = data[0] % 2 ? jq::api::MediaType::json : jq::api::MediaType::msgpack;
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  const auto result = jq::api::decode_job_result(body, type);
  if (!result && result.error().empty()) std::abort();
  return 0;
}
