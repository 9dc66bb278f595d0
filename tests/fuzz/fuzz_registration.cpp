// POST /v1/workers bodies (URL, names, headers, ttl, ca_file) in MessagePack or JSON (the first
// byte chooses). An accepted registration has a parseable http(s) URL, a ca_file only with an
// https one, no reserved header, and text the store can write as JSON (WorkerStore::add: a
// header value that is not UTF-8 made dump() throw, a 500).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <nlohmann/json.hpp>

#include "api/http_url.hpp"
#include "api/worker_registration.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto type = data[0] % 2 ? jq::api::MediaType::json : jq::api::MediaType::msgpack;
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  const auto registration = jq::api::decode_worker_registration(body, type);
  using jq::api::UrlSchemes;
  (void)jq::api::parse_http_url(body, UrlSchemes::http_or_https);  // on raw bytes, too
  if (!registration) {
    if (registration.error().message.empty()) std::abort();
    return 0;
  }
  const auto url = jq::api::parse_http_url(registration->url, UrlSchemes::http_or_https);
  if (!url || registration->names.empty()) std::abort();
  if (!registration->ca_file.empty() && !url->https) std::abort();
  nlohmann::json headers = nlohmann::json::object();
  for (const auto& [name, value] : registration->headers) headers[name] = value;
  const nlohmann::json stored = {{"url", registration->url},
                                 {"names", registration->names},
                                 {"headers", headers},
                                 {"ca_file", registration->ca_file}};
  try {
    (void)stored.dump();
  } catch (const nlohmann::json::exception&) {
    std::abort();
  }
  return 0;
}
