// The MessagePack jqbench sends and reads: push bodies (written by hand into a reused buffer, so
// the load generator spends its time on the wire, not in an encoder), the ids a push answers
// with, kept results, and the built-in worker's success answer.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace jq::bench {

struct JobShape {
  std::string name = "bench";
  int arg_bytes = 0;   // argument: a string of this many 'x'; 0 = no argument (nil)
  int priorities = 1;  // > 1: priority drawn from 0..priorities-1
  bool keep_result = false;
};

class JobEncoder {
 public:
  explicit JobEncoder(JobShape shape, std::uint64_t seed);

  // Replaces `out` with one job (a map) when `count` is 1 and `as_batch` is false, else with an
  // array of `count` jobs.
  void encode(std::string& out, int count, bool as_batch);

 private:
  void append_job(std::string& out);

  JobShape shape_;
  std::string fixed_;    // every key and value but the priority, already encoded
  unsigned fields_ = 0;  // keys of one job
  std::mt19937_64 rng_;
};

// The ids of a 201 answer: {id} or {ids: [...]}. Empty when the body is neither.
std::vector<std::string> decode_ids(std::string_view body);

// True when a GET /v1/jobs/{id}/result answer holds a result (not nil).
bool holds_result(std::string_view body);

// {type: "success", finished_at: ISO 8601 of `unix_seconds`, result: nil}.
std::string encode_success(std::int64_t unix_seconds);

}  // namespace jq::bench
