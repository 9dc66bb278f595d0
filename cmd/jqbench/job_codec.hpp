// The bodies jqbench sends and reads: push bodies in MessagePack or JSON (written by hand into a
// reused buffer, so the load generator spends its time on the wire, not in an encoder), the ids
// a push answers with, kept results, and the built-in worker's success answers (the fixed one,
// and the one that decodes the job and echoes its argument), which are MessagePack.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"

namespace jq::bench {

// How push bodies are encoded (--format). The master answers in the same format: jqbench sends
// a matching Accept.
enum class Format { msgpack, json };
std::string_view format_name(Format f);  // "msgpack" | "json"

struct JobShape {
  std::string name = "bench";
  int names = 1;       // > 1: each job is named <name>-<k>, k drawn from 1..names
  int arg_bytes = 0;   // argument: a string of this many 'x'; 0 = no argument (nil)
  int priorities = 1;  // > 1: priority drawn from 0..priorities-1
  bool keep_result = false;
  // > 0: the argument is a map {tenant: "t<k>"} with k drawn from 0..tenants-1 at random, plus
  // data: the string of arg_bytes when arg_bytes > 0.
  int tenants = 0;
  double other_share = 0;  // this share of the jobs, drawn at random, is named other_name
  std::string other_name;
  int timeout_s = 0;  // > 0: sent as the job's timeout
  Format format = Format::msgpack;
};

class JobEncoder {
 public:
  explicit JobEncoder(JobShape shape, std::uint64_t seed);

  // Replaces `out` with one job (a map) when `count` is 1 and `as_batch` is false, else with an
  // array of `count` jobs.
  void encode(std::string& out, int count, bool as_batch);
  bool json() const { return shape_.format == Format::json; }

 private:
  // One `key: value` of a map in the shape's format; in JSON every one after the first of its
  // map starts with a comma, so the map's first member is written with `first`.
  void put_member(std::string& out, std::string_view key, std::string_view encoded_value,
                  bool first = false) const;
  std::string encode_string(std::string_view s) const;
  void append_job(std::string& out);
  void append_tenant_argument(std::string& out);

  JobShape shape_;
  std::string name_;                       // "name" and its value, encoded
  std::vector<std::string> spread_names_;  // with names > 1: "name" and <name>-<k>, encoded
  std::string other_name_;                 // "name" and other_name, encoded
  std::string fixed_;    // every other key and value that is the same for every job
  std::string data_;     // with tenants: "data" and its value in the argument, or nothing
  unsigned fields_ = 0;  // keys of one job (a MessagePack map's header counts them)
  std::string scratch_;  // with tenants: the argument being written, reused
  std::mt19937_64 rng_;
};

// The ids of a 201 answer, MessagePack or JSON: {id} or {ids: [...]}. Empty when the body is
// neither.
std::vector<std::string> decode_ids(std::string_view body);

// True when a GET /v1/jobs/{id}/result answer holds a result (not nil, not JSON null).
bool holds_result(std::string_view body);

// ISO 8601 UTC of `unix_seconds`, e.g. 2026-11-25T10:20:00Z.
std::string iso8601_seconds(std::int64_t unix_seconds);

// {type: "success", finished_at, result: nil}.
std::string encode_success(std::string_view finished_at);

// A worker's answer to the job request `body` (a map with a string `id`, an integer `attempt`
// and maybe an `argument`), decoded in full: {type: "success", finished_at, result: the
// argument, encoded again}. The error says what the request lacks.
Expected<std::string, std::string> answer_decoded(std::string_view body,
                                                  std::string_view finished_at);

}  // namespace jq::bench
