// MessagePack input as every decoder first meets it: the single-value check, then the JSON view
// responses are written from. A value the check accepts must convert.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "api/body.hpp"
#include "api/msgpack_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const bool valid = jq::api::single_value_problem(bytes).empty();
  const auto json = jq::api::msgpack_to_json(bytes);
  if (valid != json.has_value()) std::abort();  // the check and the converter disagree
  if (json) (void)jq::api::encode_body(*json, jq::api::MediaType::json);
  return 0;
}
