// jqctl's subcommands: a table of verbs, each of which turns its flags into one request to the
// master (method, target, JSON body). They hold no other logic: the master validates what is
// sent and its answer is printed as it comes.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "cmd/jqctl/http_call.hpp"
#include "common/expected.hpp"

namespace CLI {
class App;
}

namespace jq::ctl {

// Flags that apply to every subcommand. They go before the subcommand, or after it when the
// subcommand has no flag of the same name (`push --timeout` is the job's timeout and
// `workers register --url` the worker's URL).
struct GlobalFlags {
  std::string url = "http://127.0.0.1:8080";  // or $JQ_URL
  std::string token;                          // or $JQ_TOKEN
  std::string ca_file;                        // or $JQ_CACERT: CAs for an https:// master
  double timeout_s = 70;                      // the whole HTTP exchange; covers `result --wait 60`
};

class Commands {
 public:
  // Adds the global flags and every subcommand to `app`.
  explicit Commands(CLI::App& app);
  ~Commands();
  Commands(const Commands&) = delete;
  Commands& operator=(const Commands&) = delete;

  const GlobalFlags& globals() const;
  std::chrono::milliseconds timeout() const;

  // After a successful parse: the chosen subcommand's request, or why its input cannot be sent
  // (an unreadable --file, an --argument that is not JSON, a --header without '=').
  Expected<HttpRequest, std::string> request() const;

  struct State;  // every flag's storage; defined in commands.cpp

 private:
  std::unique_ptr<State> state_;
};

}  // namespace jq::ctl
