#include "cmd/jqctl/commands.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iostream>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cmd/jqctl/exit_codes.hpp"
#include "cmd/jqctl/job_input.hpp"
#include "cmd/jqctl/schedule_input.hpp"

namespace jq::ctl {

using nlohmann::json;
using Build = std::function<Expected<HttpRequest, std::string>()>;

namespace {

// `workers register` flags.
struct WorkerFlags {
  std::string url;
  std::vector<std::string> names;
  std::optional<int> concurrency;
  std::optional<double> ttl_s;
  std::vector<std::string> headers;   // NAME=VALUE, one per --header
  std::string ca_file;                // a path on the master's machine; empty: not sent
  std::optional<std::string> secret;  // signs the dispatches; never printed
};

// The body of `constraints|schedules create|replace|patch`: one JSON object, from a file or the
// command line.
struct ObjectFlags {
  std::string file;  // "-": stdin
  std::optional<std::string> json_text;
};

}  // namespace

struct Commands::State {
  GlobalFlags globals;
  // Only one subcommand runs per invocation, so all verbs keep their ID or NAME here.
  std::string operand;
  std::optional<std::string> wait_s;  // result --wait; the master checks the range
  std::optional<std::string> dead_name;
  std::optional<std::string> dead_limit;
  // `jobs`: the job browser's query, passed on as it is (the master checks it).
  std::optional<std::string> browse_state;
  std::optional<std::string> browse_name;
  std::optional<std::string> browse_limit;
  std::optional<std::string> browse_cursor;
  JobFlags job;
  std::string job_file;
  WorkerFlags worker;
  ObjectFlags object;
  ScheduleFlags schedule;
  Build chosen;  // set by the chosen subcommand's callback
};

namespace {

using State = Commands::State;

bool is_unreserved(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' ||
         c == '~';
}

std::string percent_encode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : text) {
    if (is_unreserved(c)) {
      out += c;
      continue;
    }
    const auto byte = static_cast<unsigned char>(c);
    out += '%';
    out += kHex[byte >> 4];
    out += kHex[byte & 0x0f];
  }
  return out;
}

// `path` with the operand, percent-encoded, in place of "{}".
std::string fill(std::string_view path, const std::string& operand) {
  const auto at = path.find("{}");
  if (at == std::string_view::npos) return std::string(path);
  return std::string(path.substr(0, at)) + percent_encode(operand) +
         std::string(path.substr(at + 2));
}

void add_query(std::string& target, std::string_view key, const std::optional<std::string>& value) {
  if (!value) return;
  target += target.find('?') == std::string::npos ? '?' : '&';
  target += std::string(key) + "=" + percent_encode(*value);
}

std::string dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

// Adds subcommands to the app, each with the exit-code footer and a callback that makes it the
// chosen one. The callbacks refer to the State, not to the Table, which only lives while the
// subcommands are added.
class Table {
 public:
  explicit Table(State& s) : s_(s) {}

  // A subcommand that only groups others (`workers list`, `workers delete`, ...).
  CLI::App* group(CLI::App& parent, const std::string& name, const std::string& help) {
    CLI::App* sub = parent.add_subcommand(name, help);
    sub->require_subcommand(1);
    sub->footer(kExitCodesHelp);
    return sub;
  }

  // A subcommand whose request `build` makes from its flags.
  CLI::App* verb(CLI::App& parent, const std::string& name, const std::string& help, Build build) {
    CLI::App* sub = parent.add_subcommand(name, help);
    sub->footer(kExitCodesHelp);
    sub->callback([&s = s_, build = std::move(build)] { s.chosen = build; });
    return sub;
  }

  // A subcommand that sends `method path`, with its one operand (named `operand`, or none when
  // nullptr) in place of "{}" in the path.
  CLI::App* simple(CLI::App& parent, const std::string& name, const std::string& help,
                   Method method, std::string path, const char* operand) {
    CLI::App* sub = verb(parent, name, help, [&s = s_, method, path] {
      return Expected<HttpRequest, std::string>(HttpRequest{method, fill(path, s.operand), {}});
    });
    if (operand != nullptr) sub->add_option(operand, s_.operand, operand)->required();
    return sub;
  }

 private:
  State& s_;
};

void add_global_flags(CLI::App& app, GlobalFlags& g) {
  app.add_option("--url", g.url, "the master, http[s]://HOST[:PORT][/BASE]")
      ->envname("JQ_URL")
      ->capture_default_str();
  app.add_option("--token", g.token, "sent as Authorization: Bearer TOKEN")->envname("JQ_TOKEN");
  app.add_option("--cacert", g.ca_file,
                 "PEM file of the CA certificates that an https:// master's certificate is "
                 "verified against (default: the system's)")
      ->envname("JQ_CACERT");
  app.add_option("--timeout", g.timeout_s, "seconds the whole HTTP request may take")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            double seconds = 0;
            const bool number = CLI::detail::lexical_cast(text, seconds);
            return number && seconds > 0 && std::isfinite(seconds)
                       ? std::string()
                       : "must be a number of seconds above 0, got " + text;
          },
          "SECONDS > 0"))
      ->capture_default_str();
}

Expected<HttpRequest, std::string> push_request(const State& s) {
  auto body =
      s.job_file.empty() ? job_body_from_flags(s.job) : job_body_from_file(s.job_file, std::cin);
  if (!body) return unexpected(std::move(body.error()));
  return HttpRequest{Method::post, "/v1/jobs", std::move(*body)};
}

// The flags of the flow-control options; each is also excluded by --file.
std::vector<CLI::Option*> add_push_options(CLI::App* push, JobFlags& job) {
  std::vector<CLI::Option*> added;
  added.push_back(push->add_option("--delay", job.delay_s,
                                   "ready SECONDS after the push (0-31536000); not with --run-at")
                      ->type_name("SECONDS"));
  added.push_back(push->add_option("--run-at", job.run_at,
                                   "ready at TIME, ISO 8601 with an offset: "
                                   "2026-12-01T09:00:00Z or 2026-12-01T11:00:00+02:00")
                      ->type_name("TIME"));
  added.push_back(push->add_option("--unique-key", job.unique_key,
                                   "push nothing while a job of this name and key holds its "
                                   "claim; prints the existing {id, duplicate: true}")
                      ->type_name("KEY"));
  added.push_back(push->add_option("--unique-until", job.unique_until,
                                   "the claim ends when the job has started or finished "
                                   "(default finished); needs --unique-key")
                      ->type_name("started|finished"));
  added.push_back(push->add_option("--unique-for", job.unique_for_s,
                                   "the claim lasts at most SECONDS (default "
                                   "defaults.unique_for); needs --unique-key")
                      ->type_name("SECONDS"));
  added.push_back(
      push->add_option("--ordering-key", job.ordering_key,
                       "run one at a time, in push order, with the other jobs of this key")
          ->type_name("KEY"));
  added.push_back(push->add_option("--on-duplicate", job.on_duplicate,
                                   "what a push does to the waiting job holding the claim: keep "
                                   "(default), replace its argument and priority (and ready "
                                   "time: a debounce), or append to its list of arguments; "
                                   "prints merged: true; needs --unique-key")
                      ->type_name("keep|replace|append"));
  return added;
}

void add_push(Table& t, CLI::App& app, State& s) {
  CLI::App* push = t.verb(app, "push",
                          "Push one job from flags, or from --file one job (a JSON object) or a "
                          "batch (an array); prints {id} or {ids}, and duplicate: true (or "
                          "duplicates: [index, ...]) when a unique job already holds its claim, "
                          "merged: true (or merged: [index, ...]) when it took the push",
                          [&s] { return push_request(s); });
  auto* name = push->add_option("--name", s.job.name, "the job's name (what workers serve)");
  auto* argument = push->add_option("--argument", s.job.argument_json,
                                    R"(the argument as JSON, e.g. '{"to": "a@b.c"}' or '"text"')")
                       ->type_name("JSON");
  auto* priority = push->add_option("--priority", s.job.priority, "smaller runs first (default 0)");
  auto* max_retry =
      push->add_option("--max-retry", s.job.max_retry, "retries after the first attempt");
  auto* keep = push->add_flag("--keep-result", s.job.keep_result, "keep the result for `result`");
  auto* timeout = push->add_option(
      "--timeout", s.job.timeout_s,
      "the job's timeout in seconds (the HTTP timeout is --timeout before `push`)");
  timeout->type_name("SECONDS");
  const std::vector<CLI::Option*> options = add_push_options(push, s.job);
  auto* file = push->add_option("--file", s.job_file, "a JSON job or array of jobs; - reads stdin")
                   ->type_name("PATH")
                   ->excludes(name)
                   ->excludes(argument)
                   ->excludes(priority)
                   ->excludes(max_retry)
                   ->excludes(keep)
                   ->excludes(timeout);
  for (CLI::Option* option : options) file->excludes(option);
}

void add_jobs(Table& t, CLI::App& app, State& s) {
  add_push(t, app, s);
  CLI::App* result = t.verb(
      app, "result",
      "Fetch a kept result: 200 the result (then forgotten), 202 {id, state, attempts} while the "
      "job is pending, null when there is none",
      [&s] {
        std::string target = fill("/v1/jobs/{}/result", s.operand);
        add_query(target, "wait", s.wait_s);
        return Expected<HttpRequest, std::string>(HttpRequest{Method::get, target, {}});
      });
  result->add_option("ID", s.operand, "the job's id")->required();
  result->add_option("--wait", s.wait_s, "hold the request up to SECONDS (0-60) for the result")
      ->type_name("SECONDS");
  t.simple(app, "job", "Show a job: state, attempts, last_error", Method::get, "/v1/jobs/{}", "ID");
  CLI::App* browse = t.verb(
      app, "jobs",
      "Browse jobs in one state, a page at a time: {jobs, next_cursor}; queued in the order they "
      "would be chosen, scheduled by ready_at, running by deadline, dead newest first",
      [&s] {
        std::string target = "/v1/jobs";
        add_query(target, "state", s.browse_state);
        add_query(target, "name", s.browse_name);
        add_query(target, "limit", s.browse_limit);
        add_query(target, "cursor", s.browse_cursor);
        return Expected<HttpRequest, std::string>(HttpRequest{Method::get, target, {}});
      });
  browse->add_option("--state", s.browse_state, "queued (default), scheduled, running or dead")
      ->type_name("STATE");
  browse->add_option("--name", s.browse_name, "only jobs of this name");
  browse->add_option("--limit", s.browse_limit, "at most N jobs a page (default 100, max 1000)")
      ->type_name("N");
  browse->add_option("--cursor", s.browse_cursor, "the next_cursor of the previous page")
      ->type_name("CURSOR");
  t.simple(app, "cancel", "Cancel a queued or scheduled job (409 while it runs)", Method::del,
           "/v1/jobs/{}", "ID");
}

Expected<HttpRequest, std::string> register_request(const WorkerFlags& w) {
  json body = {{"url", w.url}, {"names", w.names}};
  if (w.concurrency) body["concurrency"] = *w.concurrency;
  if (w.ttl_s) body["ttl"] = *w.ttl_s;
  if (!w.ca_file.empty()) body["ca_file"] = w.ca_file;
  if (w.secret) body["secret"] = *w.secret;  // the master checks its length
  if (!w.headers.empty()) {
    json headers = json::object();
    for (const std::string& h : w.headers) {
      const auto eq = h.find('=');
      if (eq == std::string::npos || eq == 0) {
        return unexpected("--header must be NAME=VALUE, got \"" + h + "\"");
      }
      headers[h.substr(0, eq)] = h.substr(eq + 1);
    }
    body["headers"] = std::move(headers);
  }
  return HttpRequest{Method::post, "/v1/workers", dump(body)};
}

void add_workers(Table& t, CLI::App& app, State& s) {
  CLI::App* workers = t.group(app, "workers", "Worker endpoints: list, register, get, delete");
  t.simple(*workers, "list", "List the registered workers", Method::get, "/v1/workers", nullptr);
  CLI::App* reg = t.verb(*workers, "register",
                         "Register a worker endpoint, or update the one with this URL; prints {id}",
                         [&s] { return register_request(s.worker); });
  reg->add_option("--url", s.worker.url,
                  "the worker's URL (the master's is --url before `workers`)")
      ->required();
  reg->add_option("--names", s.worker.names, "job names served, comma-separated; * for all")
      ->delimiter(',')
      ->required();
  reg->add_option("--concurrency", s.worker.concurrency, "jobs at once across all masters");
  reg->add_option("--ttl", s.worker.ttl_s, "lapse unless registered again within SECONDS")
      ->type_name("SECONDS");
  reg->add_option("--header", s.worker.headers, "sent with every job; repeatable")
      ->type_name("NAME=VALUE")
      ->allow_extra_args(false);
  reg->add_option("--ca-file", s.worker.ca_file,
                  "https workers: PEM file of the CAs its certificate must chain to, a path on "
                  "the master's machine")
      ->type_name("PATH");
  // The environment keeps the secret out of `ps` and the shell history.
  reg->add_option("--secret", s.worker.secret,
                  "sign every job sent to it with this secret (16-256 bytes); re-registering "
                  "without one makes it unsigned. Prefer $JQ_WORKER_SECRET")
      ->type_name("SECRET")
      ->envname("JQ_WORKER_SECRET");
  t.simple(*workers, "get", "Show one worker", Method::get, "/v1/workers/{}", "ID");
  t.simple(*workers, "delete", "Stop sending jobs to a worker", Method::del, "/v1/workers/{}",
           "ID");
}

void add_queues(Table& t, CLI::App& app) {
  CLI::App* queues = t.group(app, "queues", "Queues, one per job name: list, get, pause, resume");
  t.simple(*queues, "list", "List the queues with their counts", Method::get, "/v1/queues",
           nullptr);
  t.simple(*queues, "get", "Show one queue", Method::get, "/v1/queues/{}", "NAME");
  t.simple(*queues, "pause", "Stop dispatching a queue's jobs (pushes are still accepted)",
           Method::post, "/v1/queues/{}/pause", "NAME");
  t.simple(*queues, "resume", "Dispatch a paused queue's jobs again", Method::post,
           "/v1/queues/{}/resume", "NAME");
}

// The --file or --json text when it is one JSON object, sent as written (the master checks
// every field and names the one that is wrong).
Expected<std::string, std::string> object_body(const ObjectFlags& f, const char* what_object) {
  if (f.file.empty() && !f.json_text) {
    return unexpected("give the " + std::string(what_object) +
                      " with --file PATH (- for stdin) or --json TEXT");
  }
  const std::string what = f.json_text     ? std::string("--json")
                           : f.file == "-" ? std::string("stdin")
                                           : "--file " + f.file;
  auto text = f.json_text ? Expected<std::string, std::string>(*f.json_text)
                          : read_source(f.file, std::cin, what);
  if (!text) return text;
  auto value = parse_json(*text, what);
  if (!value) return unexpected(std::move(value.error()));
  if (!value->is_object()) {
    return unexpected(what + " must hold one " + std::string(what_object) + " (a JSON object)");
  }
  return text;
}

// A verb that sends `method path` (the operand in place of "{}") with the object body; `what`
// names the object ("constraint"). `from_flags`, when set, builds the body without --file or
// --json.
CLI::App* object_verb(Table& t, CLI::App& parent, State& s, const std::string& name,
                      const std::string& help, Method method, std::string path, const char* operand,
                      const char* what = "constraint",
                      std::function<Expected<std::string, std::string>()> from_flags = {}) {
  CLI::App* sub = t.verb(parent, name, help, [&s, method, path, what, from_flags] {
    const bool given = !s.object.file.empty() || s.object.json_text;
    auto body = given || !from_flags ? object_body(s.object, what) : from_flags();
    if (!body) return Expected<HttpRequest, std::string>(unexpected(std::move(body.error())));
    return Expected<HttpRequest, std::string>(
        HttpRequest{method, fill(path, s.operand), std::move(*body)});
  });
  if (operand != nullptr) sub->add_option(operand, s.operand, operand)->required();
  auto* file = sub->add_option("--file", s.object.file,
                               "the " + std::string(what) + " as JSON; - reads stdin")
                   ->type_name("PATH");
  sub->add_option("--json", s.object.json_text, "the " + std::string(what) + " as JSON text")
      ->type_name("JSON")
      ->excludes(file);
  return sub;
}

void add_constraints(Table& t, CLI::App& app, State& s) {
  CLI::App* c = t.group(app, "constraints",
                        "Constraints (flow control): list, get, create, replace, patch, delete");
  t.simple(*c, "list", "List the constraints", Method::get, "/v1/constraints", nullptr);
  t.simple(*c, "get", "Show a constraint with its live state: waiting, running, top keys",
           Method::get, "/v1/constraints/{}", "NAME");
  object_verb(t, *c, s, "create", "Create a constraint (409 if the name is taken); prints it",
              Method::post, "/v1/constraints", nullptr);
  object_verb(t, *c, s, "replace", "Replace a whole constraint; prints it", Method::put,
              "/v1/constraints/{}", "NAME");
  object_verb(t, *c, s, "patch",
              "Change the fields given (null removes key, concurrency or rate); prints it",
              Method::patch, "/v1/constraints/{}", "NAME");
  t.simple(*c, "delete", "Delete a constraint", Method::del, "/v1/constraints/{}", "NAME");
}

// The timetable's flags of `schedules create` and `schedules preview`, added to `added`.
void add_timetable_flags(CLI::App* sub, ScheduleFlags& f, std::vector<CLI::Option*>& added) {
  added.push_back(
      sub->add_option("--cron", f.cron, "5 fields, or 6 with seconds first, or a macro (@daily)")
          ->type_name("EXPR"));
  added.push_back(sub->add_option("--every", f.every_s, "tick every SECONDS instead of a cron")
                      ->type_name("SECONDS"));
  added.push_back(
      sub->add_option("--timezone", f.timezone, "IANA zone the cron is read in (default UTC)")
          ->type_name("ZONE"));
  added.push_back(
      sub->add_option("--start-at", f.start_at, "no tick before TIME (ISO 8601 with an offset)")
          ->type_name("TIME"));
}

void add_schedule_create(Table& t, CLI::App& parent, State& s) {
  ScheduleFlags& f = s.schedule;
  CLI::App* create = object_verb(
      t, parent, s, "create",
      "Create a schedule from --file/--json, or from flags (409 if the name is taken); prints it",
      Method::post, "/v1/schedules", nullptr, "schedule",
      [&f] { return schedule_body_from_flags(f); });
  std::vector<CLI::Option*> flags{create->add_option("--name", f.name, "the schedule's name")};
  add_timetable_flags(create, f, flags);
  CLI::Option* job =
      create->add_option("--job", f.job_json, "the job each tick makes, as in push: a JSON object")
          ->type_name("JSON");
  CLI::Option* job_name =
      create->add_option("--job-name", f.job_name, "or only the job's name ...");
  CLI::Option* argument =
      create->add_option("--argument", f.argument_json, "... and its argument")->type_name("JSON");
  job->excludes(job_name)->excludes(argument);
  flags.insert(flags.end(), {job, job_name, argument});
  flags.push_back(
      create->add_option("--overlap", f.overlap, "allow (default), or skip while the last job runs")
          ->type_name("allow|skip"));
  flags.push_back(
      create
          ->add_option("--missed", f.missed, "ticks no master could run: run_once (default), skip")
          ->type_name("run_once|skip"));
  flags.push_back(
      create->add_option("--end-at", f.end_at, "no tick after TIME")->type_name("TIME"));
  flags.push_back(create->add_flag("--paused", f.paused, "create it paused"));
  // A body from --file or --json is sent as it is: a flag beside it would be dropped unsaid (a
  // --paused schedule created running).
  for (const char* whole : {"--file", "--json"}) {
    for (CLI::Option* flag : flags) create->get_option(whole)->excludes(flag);
  }
}

void add_schedules(Table& t, CLI::App& app, State& s) {
  CLI::App* c = t.group(app, "schedules",
                        "Recurring jobs: list, get, create, replace, patch, delete, pause, "
                        "resume, run, preview");
  t.simple(*c, "list", "List the schedules with their next runs", Method::get, "/v1/schedules",
           nullptr);
  t.simple(*c, "get", "Show a schedule: next_runs, last_run_at, runs, skipped, missed_count",
           Method::get, "/v1/schedules/{}", "NAME");
  add_schedule_create(t, *c, s);
  object_verb(t, *c, s, "replace", "Replace a whole schedule; prints it", Method::put,
              "/v1/schedules/{}", "NAME", "schedule");
  object_verb(t, *c, s, "patch",
              "Change the fields given (a new timetable counts from now); prints it", Method::patch,
              "/v1/schedules/{}", "NAME", "schedule");
  t.simple(*c, "delete", "Delete a schedule (jobs it made stay)", Method::del, "/v1/schedules/{}",
           "NAME");
  for (const bool paused : {true, false}) {
    CLI::App* sub = t.verb(
        *c, paused ? "pause" : "resume",
        paused ? "Make no more jobs until resumed" : "Tick again, from the next tick after now",
        [&s, paused] {
          return Expected<HttpRequest, std::string>(HttpRequest{
              Method::patch, fill("/v1/schedules/{}", s.operand), dump({{"paused", paused}})});
        });
    sub->add_option("NAME", s.operand, "NAME")->required();
  }
  t.simple(*c, "run", "Make one job now (also while paused); prints {id}", Method::post,
           "/v1/schedules/{}/run", "NAME");
  CLI::App* preview =
      t.verb(*c, "preview",
             "Show the next ticks of a timetable, with their offsets; stores nothing", [&s] {
               auto body = preview_body_from_flags(s.schedule);
               if (!body)
                 return Expected<HttpRequest, std::string>(unexpected(std::move(body.error())));
               return Expected<HttpRequest, std::string>(
                   HttpRequest{Method::post, "/v1/schedules/preview", std::move(*body)});
             });
  std::vector<CLI::Option*> timetable;
  add_timetable_flags(preview, s.schedule, timetable);
  preview->add_option("--from", s.schedule.from, "the ticks after TIME (default now)")
      ->type_name("TIME");
  preview->add_option("--count", s.schedule.count, "how many (1-100, default 10)")->type_name("N");
}

void add_dead(Table& t, CLI::App& app, State& s) {
  CLI::App* dead = t.group(app, "dead", "Jobs that failed for good: list, retry, delete");
  CLI::App* list = t.verb(*dead, "list", "List dead jobs, newest first", [&s] {
    std::string target = "/v1/dead";
    add_query(target, "name", s.dead_name);
    add_query(target, "limit", s.dead_limit);
    return Expected<HttpRequest, std::string>(HttpRequest{Method::get, target, {}});
  });
  list->add_option("--name", s.dead_name, "only jobs of this name");
  list->add_option("--limit", s.dead_limit, "at most N jobs (default 100, max 1000)")
      ->type_name("N");
  t.simple(*dead, "retry", "Make a dead job ready again, its attempts reset", Method::post,
           "/v1/dead/{}/retry", "ID");
  t.simple(*dead, "delete", "Forget a dead job", Method::del, "/v1/dead/{}", "ID");
}

}  // namespace

Commands::Commands(CLI::App& app) : state_(std::make_unique<State>()) {
  app.footer(kExitCodesHelp);
  app.require_subcommand(1);
  app.fallthrough();  // global flags may also follow the subcommand
  add_global_flags(app, state_->globals);
  Table t(*state_);
  add_jobs(t, app, *state_);
  add_workers(t, app, *state_);
  add_queues(t, app);
  add_dead(t, app, *state_);
  add_constraints(t, app, *state_);
  add_schedules(t, app, *state_);
  t.simple(app, "stats", "Show the counters: pushed, succeeded, failed, ready, running, ...",
           Method::get, "/v1/stats", nullptr);
}

Commands::~Commands() = default;

const GlobalFlags& Commands::globals() const {
  return state_->globals;
}

std::chrono::milliseconds Commands::timeout() const {
  return std::chrono::milliseconds(
      std::max<long long>(1, std::llround(state_->globals.timeout_s * 1000)));
}

Expected<HttpRequest, std::string> Commands::request() const {
  if (!state_->chosen) return unexpected(std::string("no command given; see jqctl --help"));
  return state_->chosen();
}

}  // namespace jq::ctl
