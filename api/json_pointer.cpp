#include "api/json_pointer.hpp"

#include <cstdint>

namespace jq::api {

std::optional<JsonPointer> parse_json_pointer(std::string_view text) {
  if (text.size() > kMaxPointerBytes) return std::nullopt;
  JsonPointer pointer{std::string(text), {}};
  if (text.empty()) return pointer;
  if (text.front() != '/') return std::nullopt;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '/') {
      if (pointer.tokens.size() == kMaxPointerTokens) return std::nullopt;
      pointer.tokens.emplace_back();
    } else if (c != '~') {
      pointer.tokens.back() += c;
    } else if (i + 1 < text.size() && (text[i + 1] == '0' || text[i + 1] == '1')) {
      pointer.tokens.back() += text[++i] == '0' ? '~' : '/';
    } else {
      return std::nullopt;
    }
  }
  return pointer;
}

std::optional<std::uint32_t> pointer_array_index(std::string_view token) {
  constexpr std::size_t kMaxDigits = 10;  // 4294967295
  if (token.empty() || token.size() > kMaxDigits) return std::nullopt;
  if (token.size() > 1 && token.front() == '0') return std::nullopt;
  std::uint64_t value = 0;
  for (char c : token) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (value > UINT32_MAX) return std::nullopt;
  return static_cast<std::uint32_t>(value);
}

}  // namespace jq::api
