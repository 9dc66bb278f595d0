// The body of `jqctl push`: one job built from flags, or the JSON text of a file (or stdin) that
// holds one job or an array of jobs. Only JSON syntax and the outer shape are checked here; the
// master validates every field and names the one that is wrong (and its index in a batch).
#pragma once

#include <istream>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/expected.hpp"

namespace jq::ctl {

// A job from flags; an absent field takes the master's default.
struct JobFlags {
  std::string name;
  std::optional<std::string> argument_json;  // any JSON value, as typed
  std::optional<long long> priority;
  std::optional<int> max_retry;
  bool keep_result = false;
  std::optional<double> timeout_s;
  std::optional<double> delay_s;
  std::optional<std::string> run_at;  // as typed; the master checks the form
  std::optional<std::string> unique_key;
  std::optional<std::string> unique_until;  // "started" or "finished"; the master checks it
  std::optional<double> unique_for_s;
  std::optional<std::string> ordering_key;
  std::optional<std::string> on_duplicate;  // "keep", "replace" or "append"; the master checks it
};

// `text` as JSON, or "<what> is not valid JSON: <where and why>".
Expected<nlohmann::json, std::string> parse_json(const std::string& text, const std::string& what);

// `object` (a JSON object) as text with one more member, `key`: `raw`, a JSON text the user
// wrote (checked by parse_json), kept as written: the master sees exactly the user's numbers.
std::string with_raw_member(const nlohmann::json& object, std::string_view key,
                            std::string_view raw);
// `text` without a leading UTF-8 byte order mark (what a Windows editor may have written).
std::string_view without_bom(std::string_view text);

// The whole text of the file at `path` ("-": `stdin_stream`), at most 64 MiB; `what` names it
// in errors ("--file x.json", "stdin").
Expected<std::string, std::string> read_source(const std::string& path, std::istream& stdin_stream,
                                               const std::string& what);

// The JSON job object, or why it cannot be built (no --name, --argument that is not JSON).
Expected<std::string, std::string> job_body_from_flags(const JobFlags& flags);

// The file's text when it is one JSON object or array; `path` "-" reads `stdin_stream`.
Expected<std::string, std::string> job_body_from_file(const std::string& path,
                                                      std::istream& stdin_stream);

}  // namespace jq::ctl
