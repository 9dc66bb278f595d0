// Bearer-token auth (the contract's "Auth"). When the config has an `auth` section, every
// request under /v1 must carry "Authorization: Bearer TOKEN" with a configured token, and the
// token's role must be one the route admits; admin is admitted everywhere. The roles live in the
// route table (Router::add), so which role may do what is written down once.
//
// Tokens are secrets: they are compared in constant time (every configured token, every byte of
// a fixed width, no early exit) and never logged or echoed in an answer.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/config/config.hpp"
#include "src/http/message.hpp"

namespace jq::http {

using Role = config::Role;

// The roles a route admits besides admin. Empty: open outside /v1, admin only under /v1 (a /v1
// route nobody gave roles to is closed rather than open to every token).
using Roles = std::vector<Role>;

class Authenticator {
 public:
  Authenticator() = default;  // auth off: every request passes
  explicit Authenticator(const config::Auth& auth);

  bool enabled() const { return enabled_; }

  // The role of the token in an Authorization header value ("Bearer TOKEN"); nullopt when the
  // header is missing, malformed or names no configured token.
  std::optional<Role> role_of(std::string_view authorization) const;

  // nullopt: let the request through to the route admitting `roles`; else the 401 or 403
  // answer. `roles` is null when no route matched (the caller answers 404 or 405 once the
  // caller is known).
  std::optional<Response> check(const Request& request, const Roles* roles) const;

 private:
  struct Entry {
    std::string padded;  // the token, zero-padded to width_ bytes
    std::size_t size;    // the token's real length
    Role role;
  };

  bool enabled_ = false;
  std::size_t width_ = 0;  // the longest token's length
  std::vector<Entry> entries_;
};

// Paths that need a token when auth is on: "/v1" and everything under it.
bool needs_token(std::string_view path);

}  // namespace jq::http
