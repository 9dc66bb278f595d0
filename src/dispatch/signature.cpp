#include "src/dispatch/signature.hpp"

#include <memory>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "src/util/hex.hpp"

namespace jq::dispatch {
namespace {

// EVP_MAC rather than the one-shot HMAC(): it takes the message in parts, so the timestamp and
// the body need not be joined into one more copy of the body.
struct MacCtxFree {
  void operator()(EVP_MAC_CTX* ctx) const { EVP_MAC_CTX_free(ctx); }
};

std::string openssl_error(std::string_view what) {
  const unsigned long code = ERR_get_error();
  char text[256] = "no OpenSSL error queued";
  if (code != 0) ERR_error_string_n(code, text, sizeof text);
  ERR_clear_error();
  return std::string(what) + ": " + text;
}

// Fetched once: the lookup walks OpenSSL's provider tables under a lock.
EVP_MAC* hmac() {
  static EVP_MAC* const mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  return mac;
}

}  // namespace

Expected<std::string, std::string> dispatch_signature(std::string_view secret,
                                                      std::string_view timestamp,
                                                      std::string_view body) {
  EVP_MAC* mac = hmac();
  if (mac == nullptr) return unexpected(openssl_error("HMAC is not available"));
  std::unique_ptr<EVP_MAC_CTX, MacCtxFree> ctx(EVP_MAC_CTX_new(mac));
  if (!ctx) return unexpected(openssl_error("HMAC context"));
  char digest[] = "SHA256";
  const OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_end(),
  };
  const auto* key = reinterpret_cast<const unsigned char*>(secret.data());
  unsigned char out[EVP_MAX_MD_SIZE];
  std::size_t out_len = 0;
  const bool ok =
      EVP_MAC_init(ctx.get(), key, secret.size(), params) == 1 &&
      EVP_MAC_update(ctx.get(), reinterpret_cast<const unsigned char*>(timestamp.data()),
                     timestamp.size()) == 1 &&
      EVP_MAC_update(ctx.get(), reinterpret_cast<const unsigned char*>("."), 1) == 1 &&
      EVP_MAC_update(ctx.get(), reinterpret_cast<const unsigned char*>(body.data()), body.size()) ==
          1 &&
      EVP_MAC_final(ctx.get(), out, &out_len, sizeof out) == 1;
  if (!ok) return unexpected(openssl_error("HMAC-SHA256"));
  return "v1=" + hex_encode(std::string_view(reinterpret_cast<const char*>(out), out_len));
}

Expected<void, std::string> sign_call(WorkerCall& call, std::string_view secret,
                                      std::int64_t now_s) {
  std::string timestamp = std::to_string(now_s);
  auto signature = dispatch_signature(secret, timestamp, call.body);
  if (!signature) return unexpected(std::move(signature.error()));
  call.headers.emplace_back(kTimestampHeader, std::move(timestamp));
  call.headers.emplace_back(kSignatureHeader, std::move(*signature));
  return {};
}

}  // namespace jq::dispatch
