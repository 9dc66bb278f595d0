#include "src/util/header_lines.hpp"

#include <algorithm>

#include "common/ascii.hpp"

namespace jq {

using namespace std::string_view_literals;

void append_header_lines(std::string& out, const HeaderLines& headers) {
  for (std::size_t i = 0; i < headers.size(); ++i) {
    const auto replaced =
        std::any_of(headers.begin() + static_cast<std::ptrdiff_t>(i) + 1, headers.end(),
                    [&](const auto& h) { return ascii_iequals(h.first, headers[i].first); });
    if (replaced) continue;
    out.append(headers[i].first).append(": "sv).append(headers[i].second).append("\r\n"sv);
  }
}

}  // namespace jq
