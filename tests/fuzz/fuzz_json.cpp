// JSON request bodies become MessagePack once, on arrival. Whatever json_to_msgpack accepts must
// be the bytes nlohmann's parser and to_msgpack give for it, and what it refuses nlohmann must
// refuse too, unless for one of json_to_msgpack's own reasons (tests/support/json_reference.hpp).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "tests/support/json_reference.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string mismatch = jq::test::json_reference_mismatch(text);
  if (!mismatch.empty()) {
    std::fprintf(stderr, "json_to_msgpack: %s\n", mismatch.c_str());
    std::abort();
  }
  return 0;
}
