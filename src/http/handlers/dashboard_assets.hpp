// The dashboard's files (dashboard/* at the repository root), compiled into the binary by
// cmake/embed_assets.cmake, so the daemon serves its page with nothing fetched from elsewhere.
#pragma once

#include <span>
#include <string_view>

namespace jq::http {

struct Asset {
  std::string_view name;          // file name, e.g. "app.js"
  std::string_view content_type;  // from the extension, e.g. "text/javascript; charset=utf-8"
  std::string_view bytes;         // the file, byte for byte
};

// Every embedded file, sorted by name. Defined in the generated dashboard_assets.cpp.
std::span<const Asset> dashboard_assets();

}  // namespace jq::http
