// JSON request bodies become MessagePack once, on arrival; whatever the converter accepts must
// be one well-formed MessagePack value that converts back.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "api/body.hpp"
#include "api/msgpack_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto packed = jq::api::json_to_msgpack(text);
  if (!packed) {
    if (packed.error().message.empty()) std::abort();  // every refusal says why
    return 0;
  }
  if (!jq::api::single_value_problem(*packed).empty()) std::abort();
  if (!jq::api::msgpack_to_json(*packed)) std::abort();
  return 0;
}
