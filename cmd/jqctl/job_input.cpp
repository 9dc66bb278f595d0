#include "cmd/jqctl/job_input.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>

#include <nlohmann/json.hpp>

namespace jq::ctl {

using nlohmann::json;

namespace {

// Far above any body a master accepts (limits.max_body_bytes, 1 MiB by default), so the master
// and not jqctl reports a body that is too large; this bound only protects jqctl's memory.
constexpr std::size_t kMaxFileBytes = 64 * 1024 * 1024;

// nlohmann's message without its "[json.exception.parse_error.101] " prefix.
std::string parse_error_text(const json::exception& e) {
  const std::string what = e.what();
  const auto end = what.find("] ");
  return end == std::string::npos ? what : what.substr(end + 2);
}

Expected<std::string, std::string> read_all(std::istream& in, const std::string& what) {
  std::string text;
  char chunk[64 * 1024];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text.append(chunk, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxFileBytes) {
      return unexpected(what + " is larger than " + std::to_string(kMaxFileBytes) + " bytes");
    }
  }
  if (in.bad()) return unexpected("cannot read " + what);
  return text;
}

}  // namespace

Expected<json, std::string> parse_json(const std::string& text, const std::string& what) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    return unexpected(what + " is not valid JSON: " + parse_error_text(e));
  }
}

std::string_view without_bom(std::string_view text) {
  constexpr std::string_view kBom = "\xEF\xBB\xBF";  // parse_json skips it; a body may not start so
  if (text.starts_with(kBom)) text.remove_prefix(kBom.size());
  return text;
}

std::string with_raw_member(const json& object, std::string_view key, std::string_view raw) {
  raw = without_bom(raw);
  std::string out = object.dump(-1, ' ', false, json::error_handler_t::replace);
  out.pop_back();  // the closing brace
  if (out.size() > 1) out += ',';
  out += json(std::string(key)).dump();
  out += ':';
  out += raw;
  out += '}';
  return out;
}

Expected<std::string, std::string> read_source(const std::string& path, std::istream& stdin_stream,
                                               const std::string& what) {
  if (path == "-") return read_all(stdin_stream, what);
  std::ifstream file(path, std::ios::binary);
  if (!file) return unexpected("cannot open " + what + ": " + std::strerror(errno));
  return read_all(file, what);
}

Expected<std::string, std::string> job_body_from_flags(const JobFlags& flags) {
  if (flags.name.empty()) return unexpected(std::string("push needs --name NAME or --file PATH"));
  json job = {{"name", flags.name}};
  if (flags.priority) job["priority"] = *flags.priority;
  if (flags.max_retry) job["max_retry"] = *flags.max_retry;
  if (flags.keep_result) job["keep_result"] = true;
  if (flags.timeout_s) job["timeout"] = *flags.timeout_s;
  if (flags.delay_s) job["delay"] = *flags.delay_s;
  if (flags.run_at) job["run_at"] = *flags.run_at;
  if (flags.unique_key) job["unique_key"] = *flags.unique_key;
  if (flags.unique_until) job["unique_until"] = *flags.unique_until;
  if (flags.unique_for_s) job["unique_for"] = *flags.unique_for_s;
  if (flags.ordering_key) job["ordering_key"] = *flags.ordering_key;
  if (flags.on_duplicate) job["on_duplicate"] = *flags.on_duplicate;
  if (flags.argument_json) {
    auto argument = parse_json(*flags.argument_json, "--argument");
    if (!argument) return unexpected(std::move(argument.error()));
    // As written, like --file: parsed and dumped again, an integer past 64 bits became a float
    // the master took, where it answers 400 for the number the user wrote.
    return with_raw_member(job, "argument", *flags.argument_json);
  }
  return job.dump(-1, ' ', false, json::error_handler_t::replace);
}

Expected<std::string, std::string> job_body_from_file(const std::string& path,
                                                      std::istream& stdin_stream) {
  const std::string what = path == "-" ? std::string("stdin") : "--file " + path;
  auto text = read_source(path, stdin_stream, what);
  if (!text) return text;
  auto value = parse_json(*text, what);
  if (!value) return unexpected(std::move(value.error()));
  if (!value->is_object() && !value->is_array()) {
    return unexpected(what + " must hold one job (a JSON object) or an array of jobs");
  }
  // Sent as written (but a byte order mark): the master sees exactly the user's numbers and
  // strings.
  return std::string(without_bom(*text));
}

}  // namespace jq::ctl
