// The reference json_to_msgpack is checked against: nlohmann's parser and to_msgpack, which
// api/json_to_msgpack.cpp must match byte for byte on every text both accept. Used by the fuzz
// target and by the unit test of the transcoder.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "api/body.hpp"

namespace jq::test {

// What differs between json_to_msgpack(text) and the reference; empty when they agree. They
// agree when both accept with the same bytes, when both refuse, or when only json_to_msgpack
// refuses and for one of its own reasons (a repeated key, an integer beyond 64 bits, nesting
// deeper than MessagePack input may, a NUL byte outside a string: nlohmann takes it for the end
// of the text and ignores what follows, where a body ends at its last byte).
inline std::string json_reference_mismatch(std::string_view text) {
  const auto ours = api::json_to_msgpack(text);
  std::optional<nlohmann::ordered_json> reference;
  try {
    reference = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception&) {
  }
  if (!ours) {
    const std::string& why = ours.error().message;
    if (why.empty()) return "a refusal that does not say why";
    if (!reference) return {};
    for (const char* own : {"appears twice in one object", "is an integer outside the 64-bit",
                            "nests arrays/objects deeper than", "unexpected '\\x00'"}) {
      if (why.find(own) != std::string::npos) return {};
    }
    return "refused what nlohmann reads: " + why;
  }
  if (!reference) return "accepted what nlohmann refuses";
  std::string expected;
  nlohmann::ordered_json::to_msgpack(*reference, nlohmann::detail::output_adapter<char>(expected));
  if (expected != *ours) return "bytes differ from nlohmann's to_msgpack";
  return {};
}

}  // namespace jq::test
