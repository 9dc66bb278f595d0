#include "src/http/handlers/dashboard.hpp"

#include <algorithm>
#include <string>

#include "src/http/handlers/dashboard_assets.hpp"
#include "src/http/respond.hpp"

namespace jq::http {
namespace {

constexpr std::string_view kPage = "index.html";

// Only this origin's files and API; no inline script or style, no plug-ins, no framing.
constexpr std::string_view kContentSecurityPolicy =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'";

const Asset* find_asset(std::string_view name) {
  const auto assets = dashboard_assets();
  const auto it =
      std::find_if(assets.begin(), assets.end(), [name](const Asset& a) { return a.name == name; });
  return it == assets.end() ? nullptr : &*it;
}

// The files change only with the binary; no-cache makes the browser ask again after an upgrade.
Response serve(const Asset& asset) {
  Response r;
  r.content_type = asset.content_type;
  r.body = std::string(asset.bytes);
  r.headers = {{"Cache-Control", "no-cache"},
               {"Content-Security-Policy", std::string(kContentSecurityPolicy)},
               {"X-Content-Type-Options", "nosniff"},
               {"Referrer-Policy", "no-referrer"}};
  return r;
}

}  // namespace

void add_dashboard_routes(Router& router) {
  router.add(Method::get, "/",
             [](Request&) -> asio::awaitable<Response> { co_return serve(*find_asset(kPage)); });
  router.add(Method::get, "/assets/{file}", [](Request& req) -> asio::awaitable<Response> {
    const std::string_view name = req.param("file");
    const Asset* asset = name == kPage ? nullptr : find_asset(name);
    if (asset == nullptr) {
      co_return respond_error(req, api::ErrorCode::not_found,
                              "no dashboard asset " + std::string(name) + "; the page is at /");
    }
    co_return serve(*asset);
  });
}

}  // namespace jq::http
