// jqctl's exit codes: the one table from an HTTP status (or a failure before any status) to the
// code a script can branch on, and the text that documents it in --help.
#pragma once

namespace jq::ctl {

enum class Exit : int {
  ok = 0,           // 2xx, including 202 "still pending" and 200 null from `result`
  other = 1,        // anything else (500, an unexpected status)
  not_found = 3,    // 404
  bad_input = 4,    // 400, 413, 415; bad flags, a bad --url or --cacert, a bad --file
  unavailable = 5,  // 503; refused, DNS failure, timeout, dropped, certificate not verified
  conflict = 6,     // 409 (cancelling a running job)
  auth = 7,         // 401, 403
};

constexpr int to_int(Exit e) {
  return static_cast<int>(e);
}

constexpr Exit exit_for_status(int status) {
  if (status >= 200 && status < 300) return Exit::ok;
  switch (status) {
    case 404:
      return Exit::not_found;
    case 400:
    case 413:
    case 415:
      return Exit::bad_input;
    case 503:
      return Exit::unavailable;
    case 409:
      return Exit::conflict;
    case 401:
    case 403:
      return Exit::auth;
    default:
      return Exit::other;
  }
}

inline constexpr const char* kExitCodesHelp =
    "Exit codes:\n"
    "  0  success (also 202 \"still pending\" and 200 null from `result`)\n"
    "  1  any other failure (e.g. 500)\n"
    "  3  not found (404)\n"
    "  4  bad input (400, 413, 415; bad flags, bad --url, bad --file)\n"
    "  5  server unavailable (503, connection refused, timeout, unverified certificate)\n"
    "  6  conflict (409, e.g. cancelling a running job)\n"
    "  7  not allowed (401, 403)\n"
    "Errors go to stderr as one line: \"jqctl: MESSAGE\".";

}  // namespace jq::ctl
