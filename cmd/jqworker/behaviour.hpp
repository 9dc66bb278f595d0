// What jqworker answers to a job: a success echoing the argument, or whatever the argument's
// directives ask for (a failure, another HTTP status, garbage, no answer at all). Pure: no
// sockets, no clock of its own, so the answers are easy to reason about and to test.
//
// Result objects are MessagePack (the argument's bytes copied into the success untouched) or,
// with AnswerFormat::json, JSON with Content-Type application/json, as the contract allows: the
// argument is then decoded (nlohmann's from_msgpack) and encoded again as JSON, the work a
// JSON worker does. Binary values have no JSON form: nlohmann writes them as {bytes, subtype}.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "cmd/jqworker/job_request.hpp"

namespace jq::worker {

enum class AnswerFormat { msgpack, json };

// An HTTP answer, or none: `close_connection` means drop the connection without writing.
struct Reply {
  bool close_connection = false;
  bool success = false;  // the body is a success result (what --journal notes)
  int status = 200;
  std::string content_type;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

// The answer to `job`, finished at `now` (the time put in `finished_at`). The caller has already
// waited the job's `sleep` directive.
Reply answer_job(const JobRequest& job, std::chrono::system_clock::time_point now,
                 AnswerFormat format = AnswerFormat::msgpack);

// A plain-text answer (400s, /stats errors).
Reply text_reply(int status, std::string text);

// ISO 8601 UTC with milliseconds, e.g. 2024-05-01T12:00:00.250Z.
std::string iso8601_utc(std::chrono::system_clock::time_point t);

}  // namespace jq::worker
