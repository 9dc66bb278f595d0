// jqctl: the command-line client of jqmaster. flags -> request -> HTTP call -> output -> exit
// code. The subcommands are in commands.cpp, the exit codes in exit_codes.hpp.
#include <unistd.h>

#include <CLI/CLI.hpp>

#include "cmd/jqctl/commands.hpp"
#include "cmd/jqctl/output.hpp"

namespace {

using jq::ctl::Exit;

int parse_failure(const CLI::App& app, const CLI::ParseError& e) {
  if (e.get_exit_code() == 0) return app.exit(e);  // --help
  // `jqctl stat`: CLI11 says only that a subcommand is required; name the word it did not know
  // (not for a missing option, nor for a misspelt flag, which its own error names).
  const std::string what = e.what();
  if (const auto extra = app.remaining(true);
      !extra.empty() && !extra.front().starts_with("-") &&
      what.find("subcommand is required") != std::string::npos) {
    return to_int(
        jq::ctl::fail(Exit::bad_input, "unknown subcommand '" + extra.front() + "' (see --help)"));
  }
  return to_int(jq::ctl::fail(Exit::bad_input, std::string(e.what()) + " (see --help)"));
}

Exit run(const jq::ctl::Commands& commands) {
  auto request = commands.request();
  if (!request) return jq::ctl::fail(Exit::bad_input, request.error());
  auto base = jq::ctl::parse_base_url(commands.globals().url);
  if (!base) return jq::ctl::fail(Exit::bad_input, "--url " + base.error());
  if (const std::string& ca_file = commands.globals().ca_file; !ca_file.empty()) {
    if (auto usable = jq::ctl::check_ca_file(ca_file); !usable) {
      return jq::ctl::fail(Exit::bad_input, "--cacert " + usable.error());
    }
  }
  const jq::ctl::CallOptions options{*base, commands.globals().token, commands.timeout(),
                                     commands.globals().ca_file};
  auto response = jq::ctl::http_call(options, *request);
  if (!response) return jq::ctl::fail(Exit::unavailable, response.error());
  return jq::ctl::report(*response, isatty(STDOUT_FILENO) == 1);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "jqctl: push jobs to a jqmaster, fetch their results, and manage its workers, "
      "queues and dead jobs. Prints the master's JSON answer on stdout.",
      "jqctl"};
  jq::ctl::Commands commands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return parse_failure(app, e);
  }
  return to_int(run(commands));
}
