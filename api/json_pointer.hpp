// JSON Pointers (RFC 6901) as constraints use them: a path into a job's argument ("/tenant",
// "/items/0/sku"), parsed once into its reference tokens ("~1" is '/', "~0" is '~').
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"

namespace jq::api {

inline constexpr std::size_t kMaxPointerBytes = 256;
// One token per level; a MessagePack value nests at most 64 levels (MsgpackReader::kMaxDepth).
inline constexpr std::size_t kMaxPointerTokens = 64;

struct JsonPointer {
  std::string text;                 // as written; "" is the whole value
  std::vector<std::string> tokens;  // unescaped, in order

  bool operator==(const JsonPointer&) const = default;
};

// The rule a pointer must follow, for messages.
inline constexpr std::string_view kPointerRule =
    "must be a JSON Pointer: \"\" (the whole argument) or \"/\" followed by names separated by "
    "\"/\", with \"~0\" for \"~\" and \"~1\" for \"/\"; at most 256 bytes";

// nullopt when `text` is not a pointer by kPointerRule: no leading '/', a '~' not followed by
// '0' or '1', longer than kMaxPointerBytes or deeper than kMaxPointerTokens.
std::optional<JsonPointer> parse_json_pointer(std::string_view text);

// A token as an array index: "0" or digits without a leading zero, below 2^32. nullopt for
// anything else ("-", "01", "x"): such a token finds nothing in an array.
std::optional<std::uint32_t> pointer_array_index(std::string_view token);

}  // namespace jq::api
