// Constraint bodies (POST and PATCH) and the JobMatcher. The input is
//   <type byte> <constraint body> "\0\0" <job name> "\0\0" <argument bytes>
// (the first byte's low bit chooses JSON or MessagePack for the body). A refusal always says
// what is wrong; an accepted constraint encodes and decodes back to itself; matching any name and
// any bytes (well-formed or not) gives at most one match with a key of at most 256 bytes; the
// glob agrees with a plain recursive reference.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "api/constraint.hpp"
#include "api/job_matcher.hpp"

namespace {

constexpr std::string_view kSeparator("\0\0", 2);

std::string_view next_part(std::string_view& rest) {
  const auto at = rest.find(kSeparator);
  std::string_view part = rest.substr(0, at);
  rest = at == std::string_view::npos ? std::string_view{} : rest.substr(at + kSeparator.size());
  return part;
}

bool reference_glob(std::string_view glob, std::string_view name, int budget) {
  if (--budget < 0) return jq::api::glob_match(glob, name);  // too costly to compare: agree
  if (glob.empty()) return name.empty();
  if (glob.front() == '*') {
    for (std::size_t skip = 0; skip <= name.size(); ++skip) {
      if (reference_glob(glob.substr(1), name.substr(skip), budget)) return true;
    }
    return false;
  }
  if (name.empty()) return false;
  if (glob.front() != '?' && glob.front() != name.front()) return false;
  return reference_glob(glob.substr(1), name.substr(1), budget);
}

void check_refusal(const jq::api::ApiError& error) {
  if (error.message.empty()) std::abort();
  if (error.code == jq::api::ErrorCode::invalid_job && !error.field) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto type = data[0] % 2 ? jq::api::MediaType::json : jq::api::MediaType::msgpack;
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::string_view body = next_part(rest);
  const std::string_view name = next_part(rest);
  const std::string_view argument = rest;

  if (auto patch = jq::api::decode_constraint_patch(body, type, "c"); !patch) {
    check_refusal(patch.error());
  }
  const auto constraint = jq::api::decode_constraint(body, type);
  if (!constraint) {
    check_refusal(constraint.error());
    return 0;
  }
  const std::string stored = jq::api::encode_constraint(*constraint);
  const auto back = jq::api::decode_constraint(stored, jq::api::MediaType::msgpack);
  if (!back || !(*back == *constraint) || jq::api::encode_constraint(*back) != stored) std::abort();

  const jq::api::JobMatcher matcher({*constraint});
  const auto matched = matcher.match(name, argument);
  if (matched.size() > 1) std::abort();
  for (const auto& m : matched) {
    if (m.constraint != constraint->name || m.key.size() > jq::api::kMaxConstraintKeyBytes) {
      std::abort();
    }
  }
  const bool glob = jq::api::glob_match(constraint->match.name_glob, name);
  if (glob != reference_glob(constraint->match.name_glob, name, 100000)) std::abort();
  if (!matched.empty() && !glob) std::abort();
  return 0;
}
