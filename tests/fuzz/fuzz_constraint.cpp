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

// Dynamic programming over (glob position, name position): plainly right, O(glob * name).
bool reference_glob(std::string_view glob, std::string_view name) {
  const std::size_t g = glob.size(), n = name.size();
  std::vector<char> ok((g + 1) * (n + 1), 0);  // ok[i * (n + 1) + j]: glob[i:] matches name[j:]
  const auto at = [&](std::size_t i, std::size_t j) -> char& { return ok[i * (n + 1) + j]; };
  at(g, n) = 1;
  for (std::size_t i = g; i-- > 0;) {
    for (std::size_t j = n + 1; j-- > 0;) {
      if (glob[i] == '*') {
        at(i, j) = at(i + 1, j) || (j < n && at(i, j + 1));
      } else {
        at(i, j) = j < n && (glob[i] == '?' || glob[i] == name[j]) && at(i + 1, j + 1);
      }
    }
  }
  return at(0, 0);
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
  constexpr std::size_t kReferenceNameBytes = 512;  // the reference is quadratic
  if (name.size() <= kReferenceNameBytes &&
      glob != reference_glob(constraint->match.name_glob, name)) {
    std::abort();
  }
  if (!matched.empty() && !glob) std::abort();
  return 0;
}
