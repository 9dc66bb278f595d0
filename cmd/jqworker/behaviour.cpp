#include "cmd/jqworker/behaviour.hpp"

#include <cstdio>
#include <ctime>

#include <msgpack.hpp>
#include <nlohmann/json.hpp>

namespace jq::worker {
namespace {

constexpr const char* kMsgpack = "application/msgpack";
constexpr const char* kJson = "application/json";

using Packer = msgpack::packer<msgpack::sbuffer>;

Reply msgpack_reply(const msgpack::sbuffer& buffer) {
  Reply r;
  r.content_type = kMsgpack;
  r.body.assign(buffer.data(), buffer.size());
  return r;
}

// {type: "success", finished_at, result}, with the argument's bytes copied in as `result`.
Reply success(const JobRequest& job, const std::string& finished_at) {
  msgpack::sbuffer buffer;
  Packer pk(buffer);
  pk.pack_map(3);
  pk.pack("type").pack("success");
  pk.pack("finished_at").pack(finished_at);
  pk.pack("result");
  buffer.write(job.argument.data(), job.argument.size());
  Reply r = msgpack_reply(buffer);
  r.success = true;
  return r;
}

Reply json_reply(const nlohmann::json& value) {
  Reply r;
  r.content_type = kJson;
  r.body = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return r;
}

Reply failure(const JobRequest& job, const std::string& finished_at, const char* reason,
              const std::string& message, AnswerFormat format) {
  if (format == AnswerFormat::json) {
    return json_reply({{"type", "failure"},
                       {"reason", reason},
                       {"finished_at", finished_at},
                       {"should_retry", job.directives.should_retry},
                       {"error", "requested failure"},
                       {"message", message}});
  }
  msgpack::sbuffer buffer;
  Packer pk(buffer);
  pk.pack_map(6);
  pk.pack("type").pack("failure");
  pk.pack("reason").pack(reason);
  pk.pack("finished_at").pack(finished_at);
  pk.pack("should_retry").pack(job.directives.should_retry);
  pk.pack("error").pack("requested failure");
  pk.pack("message").pack(message);
  return msgpack_reply(buffer);
}

// The success in JSON: the argument decoded from MessagePack, encoded again as JSON. An argument
// nlohmann cannot read (it came from the master, so it should not happen) is a failure.
Reply json_success(const JobRequest& job, const std::string& finished_at) {
  auto argument = nlohmann::json::from_msgpack(job.argument, true, false);
  if (argument.is_discarded()) {
    return failure(job, finished_at, "other", "the argument is not MessagePack that JSON can hold",
                   AnswerFormat::json);
  }
  Reply r = json_reply(
      {{"type", "success"}, {"finished_at", finished_at}, {"result", std::move(argument)}});
  r.success = true;
  return r;
}

Reply status_reply(const Directives& d) {
  std::string text = "status " + std::to_string(*d.status) + " on purpose\n";
  if (text.size() < d.status_bytes) text.resize(d.status_bytes, '.');  // a large error page
  Reply r = text_reply(*d.status, std::move(text));
  if (d.retry_after_s) r.headers.emplace_back("Retry-After", std::to_string(*d.retry_after_s));
  return r;
}

// A 200 whose body the master must not accept as a result object.
Reply garbage(Directives::Garbage kind) {
  if (kind == Directives::Garbage::bytes) {
    Reply r;
    r.content_type = kMsgpack;
    r.body = "\xc1 this is not MessagePack";  // 0xc1 is never used by MessagePack
    return r;
  }
  msgpack::sbuffer buffer;
  Packer pk(buffer);
  pk.pack_map(2);
  pk.pack("type").pack("garbage");
  pk.pack("note").pack("a map that is not a result object");
  return msgpack_reply(buffer);
}

Reply no_answer() {
  Reply r;
  r.close_connection = true;
  return r;
}

bool should_fail(const JobRequest& job) {
  return job.directives.fail ||
         (job.directives.fail_until && job.attempt < *job.directives.fail_until);
}

}  // namespace

Reply answer_job(const JobRequest& job, std::chrono::system_clock::time_point now,
                 AnswerFormat format) {
  const Directives& d = job.directives;
  const std::string finished_at = iso8601_utc(now);
  const auto attempt = [&job] { return "(attempt " + std::to_string(job.attempt) + ")"; };
  if (d.close) return no_answer();
  if (d.status) return status_reply(d);
  if (d.garbage != Directives::Garbage::none) return garbage(d.garbage);
  if (d.timeout_reason) {
    return failure(job, finished_at, "timeout", "timed out on purpose " + attempt(), format);
  }
  if (should_fail(job)) {
    return failure(job, finished_at, "other", "failed on purpose " + attempt(), format);
  }
  return format == AnswerFormat::json ? json_success(job, finished_at) : success(job, finished_at);
}

Reply text_reply(int status, std::string text) {
  Reply r;
  r.status = status;
  r.content_type = "text/plain";
  r.body = std::move(text);
  return r;
}

std::string iso8601_utc(std::chrono::system_clock::time_point t) {
  using namespace std::chrono;
  const auto ms = duration_cast<milliseconds>(t.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  const int year = tm.tm_year + 1900;
  if (ms < 0 || year > 9999) {
    char out[64];
    std::snprintf(out, sizeof out, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", year, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000));
    return out;
  }
  // By hand: snprintf took 5 % of jqworker's instructions per job.
  char out[] = "0000-00-00T00:00:00.000Z";
  const auto digits = [&out](std::size_t at, int value, int count) {
    for (int i = count - 1; i >= 0; --i, value /= 10)
      out[at + i] = static_cast<char>('0' + value % 10);
  };
  digits(0, year, 4);
  digits(5, tm.tm_mon + 1, 2);
  digits(8, tm.tm_mday, 2);
  digits(11, tm.tm_hour, 2);
  digits(14, tm.tm_min, 2);
  digits(17, tm.tm_sec, 2);
  digits(20, static_cast<int>(ms % 1000), 3);
  return std::string(out, sizeof out - 1);
}

}  // namespace jq::worker
