#include "src/util/header_lines.hpp"

#include <algorithm>

namespace jq {
namespace {

bool same_name(std::string_view a, std::string_view b) {
  const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                            [&](char x, char y) { return lower(x) == lower(y); });
}

}  // namespace

void append_header_lines(std::string& out, const HeaderLines& headers) {
  for (std::size_t i = 0; i < headers.size(); ++i) {
    const auto replaced =
        std::any_of(headers.begin() + static_cast<std::ptrdiff_t>(i) + 1, headers.end(),
                    [&](const auto& h) { return same_name(h.first, headers[i].first); });
    if (replaced) continue;
    out.append(headers[i].first).append(": ").append(headers[i].second).append("\r\n");
  }
}

}  // namespace jq
