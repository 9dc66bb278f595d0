// What jqctl shows: a successful answer's body as JSON on stdout (pretty-printed with a 2-space
// indent on a terminal, compact otherwise, nothing for an empty body such as a 204), or one line
// "jqctl: MESSAGE" on stderr, where MESSAGE is the `message` of the master's error body.
#pragma once

#include <string_view>

#include "cmd/jqctl/exit_codes.hpp"
#include "cmd/jqctl/http_call.hpp"

namespace jq::ctl {

// Prints `response` and returns the exit code its status stands for.
Exit report(const HttpResponse& response, bool pretty);

// "jqctl: MESSAGE" on stderr, on one line; returns `code`.
Exit fail(Exit code, std::string_view message);

}  // namespace jq::ctl
