#include "api/base64.hpp"

#include <cstdint>

namespace jq::api {

std::string base64_encode(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t n = static_cast<std::uint8_t>(bytes[i]) << 16 |
                            static_cast<std::uint8_t>(bytes[i + 1]) << 8 |
                            static_cast<std::uint8_t>(bytes[i + 2]);
    for (int shift = 18; shift >= 0; shift -= 6) out += kAlphabet[(n >> shift) & 0x3f];
  }
  const std::size_t rest = bytes.size() - i;
  if (rest == 0) return out;
  std::uint32_t n = static_cast<std::uint8_t>(bytes[i]) << 16;
  if (rest == 2) n |= static_cast<std::uint8_t>(bytes[i + 1]) << 8;
  out += kAlphabet[(n >> 18) & 0x3f];
  out += kAlphabet[(n >> 12) & 0x3f];
  out += rest == 2 ? kAlphabet[(n >> 6) & 0x3f] : '=';
  out += '=';
  return out;
}

}  // namespace jq::api
