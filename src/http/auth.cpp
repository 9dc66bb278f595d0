#include "src/http/auth.hpp"

#include "common/ascii.hpp"
#include "src/http/respond.hpp"

namespace jq::http {
namespace {

constexpr std::string_view kProtectedPrefix = "/v1";
constexpr std::string_view kScheme = "Bearer";

// The token of "Bearer TOKEN" (scheme case-insensitive, RFC 7235); nullopt when the value has
// another shape.
std::optional<std::string_view> bearer_token(std::string_view value) {
  if (value.size() <= kScheme.size() || !ascii_iequals(value.substr(0, kScheme.size()), kScheme) ||
      value[kScheme.size()] != ' ') {
    return std::nullopt;
  }
  std::string_view token = value.substr(kScheme.size());
  const auto start = token.find_first_not_of(' ');
  if (start == std::string_view::npos) return std::nullopt;
  token.remove_prefix(start);
  if (token.find(' ') != std::string_view::npos) return std::nullopt;
  return token;
}

// "a push or admin token", "an admin token".
std::string roles_wanted(const Roles& roles) {
  std::vector<std::string_view> names;
  for (Role role : roles) {
    if (role != Role::admin) names.push_back(config::to_string(role));
  }
  names.push_back(config::to_string(Role::admin));
  std::string out = names.size() == 1 ? "an " : "a ";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out + " token";
}

Response unauthorized(const Request& request, std::string message) {
  Response r = respond_error(request, api::ErrorCode::unauthorized, std::move(message));
  r.headers.emplace_back("WWW-Authenticate", "Bearer");
  return r;
}

std::string unauthorized_message(std::string_view authorization) {
  if (authorization.empty()) {
    return "this endpoint needs a token: send Authorization: Bearer <token>";
  }
  if (!bearer_token(authorization)) {
    return "the Authorization header must be \"Bearer <token>\": send Authorization: Bearer "
           "<token>";
  }
  return "the token is not one of the master's auth.tokens: send Authorization: Bearer <token> "
         "with a configured token";
}

}  // namespace

Authenticator::Authenticator(const config::Auth& auth) : enabled_(auth.enforced()) {
  for (const config::Token& t : auth.tokens) width_ = std::max(width_, t.token.size());
  for (const config::Token& t : auth.tokens) {
    std::string padded = t.token;
    padded.resize(width_, '\0');
    entries_.push_back(Entry{std::move(padded), t.token.size(), t.role});
  }
}

// Compares the presented token with every configured one over the same width_ bytes and
// remembers the match without stopping, so the time taken says nothing about how close a guess
// came or which token it resembled.
std::optional<Role> Authenticator::role_of(std::string_view authorization) const {
  const auto token = bearer_token(authorization);
  if (!token) return std::nullopt;
  std::string presented(width_, '\0');
  token->copy(presented.data(), std::min(token->size(), width_));
  std::optional<Role> found;
  for (const Entry& entry : entries_) {
    std::size_t diff = entry.size ^ token->size();
    for (std::size_t i = 0; i < width_; ++i) {
      diff |= static_cast<unsigned char>(presented[i] ^ entry.padded[i]);
    }
    if (diff == 0) found = entry.role;
  }
  return found;
}

std::optional<Response> Authenticator::check(const Request& request, const Roles* roles) const {
  if (!enabled_) return std::nullopt;
  if (!needs_token(request.path) && (roles == nullptr || roles->empty())) return std::nullopt;
  const auto role = role_of(request.authorization);
  if (!role) return unauthorized(request, unauthorized_message(request.authorization));
  if (roles == nullptr || *role == Role::admin ||
      std::find(roles->begin(), roles->end(), *role) != roles->end()) {
    return std::nullopt;
  }
  return respond_error(request, api::ErrorCode::forbidden,
                       "this token's role (" + std::string(config::to_string(*role)) + ") cannot " +
                           std::string(to_string(request.method)) + " " + request.path + "; use " +
                           roles_wanted(*roles));
}

bool needs_token(std::string_view path) {
  return path.starts_with(kProtectedPrefix) &&
         (path.size() == kProtectedPrefix.size() || path[kProtectedPrefix.size()] == '/');
}

}  // namespace jq::http
