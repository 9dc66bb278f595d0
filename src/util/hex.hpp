// Lower-case hexadecimal: how signatures are sent and how a worker's secret is kept in its
// registration JSON (a secret may hold bytes that are not UTF-8, which JSON text cannot carry).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace jq {

std::string hex_encode(std::string_view bytes);
// nullopt for an odd length or a character that is not a hex digit (either case).
std::optional<std::string> hex_decode(std::string_view hex);

}  // namespace jq
