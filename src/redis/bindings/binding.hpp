// What every script binding shares. A binding (one header per lua/<script>-<keys>.lua) is the
// one C++ statement of a script's contract: its KEYS as named members of `Keys`, its ARGV as
// named members of `Args`, laid out in the header's order by `call()` and nowhere else, and its
// reply read by `decode()`. A status code the script does not document is a BadReply, never a
// default outcome. Stores and tests build calls and read replies only through bindings, and
// tests/unit/engine_bindings_test.cpp checks each binding against its script's header: the
// names in `key_names` and `arg_names` against the KEYS[i] and ARGV[i] lines, `args_per_item`
// (a variable list: ARGV[n..]) against the line that announces it, and every Status value
// against the Returns section.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"
#include "src/redis/reply.hpp"
#include "src/redis/scripts.hpp"

namespace jq::redis::bindings {

// A reply its binding cannot read: a script and a binding out of step, or a store that a
// correct engine never writes.
struct BadReply {
  std::string script;  // "cancelJob-8"
  std::string detail;  // what was wrong, with the reply's text

  std::string message() const { return script + ": " + detail; }
};

template <class T>
using Decoded = Expected<T, BadReply>;

inline BadReply bad_reply(ScriptId id, std::string_view what, const Reply& reply) {
  std::string detail(what);
  if (!reply.str.empty()) detail += " (" + reply.str + ")";
  return BadReply{std::string(script(id).file), std::move(detail)};
}

inline std::string arg(std::int64_t n) {
  return std::to_string(n);
}
inline std::string arg(bool b) {
  return b ? "1" : "0";
}

inline Decoded<std::int64_t> integer_reply(ScriptId id, const Reply& reply) {
  if (!reply.is_integer()) return unexpected(bad_reply(id, "not an integer", reply));
  return reply.integer;
}

// `code` as one of the documented `statuses`; any other value is a BadReply.
template <class Status, std::size_t N>
Decoded<Status> status_of(ScriptId id, std::int64_t code, const std::array<Status, N>& statuses,
                          const Reply& reply) {
  for (Status s : statuses) {
    if (static_cast<std::int64_t>(s) == code) return s;
  }
  return unexpected(bad_reply(id, "undocumented status " + std::to_string(code), reply));
}

// A reply that is one integer status.
template <class Status, std::size_t N>
Decoded<Status> integer_status(ScriptId id, const std::array<Status, N>& statuses,
                               const Reply& reply) {
  auto code = integer_reply(id, reply);
  if (!code) return unexpected(std::move(code.error()));
  return status_of(id, *code, statuses, reply);
}

// An array of `n` integers (n = 0: any length).
inline Decoded<std::vector<std::int64_t>> integers_reply(ScriptId id, const Reply& reply,
                                                         std::size_t n = 0) {
  if (!reply.is_array() || (n > 0 && reply.elements.size() != n)) {
    return unexpected(bad_reply(id, "not an array of " + std::to_string(n) + " integers", reply));
  }
  std::vector<std::int64_t> out;
  out.reserve(reply.elements.size());
  for (const Reply& e : reply.elements) {
    if (!e.is_integer()) return unexpected(bad_reply(id, "an element is not an integer", reply));
    out.push_back(e.integer);
  }
  return out;
}

// One documented status per job of a batch, in order; `jobs` is how many were given.
template <class Status, std::size_t N>
Decoded<std::vector<Status>> statuses_reply(ScriptId id, const std::array<Status, N>& statuses,
                                            const Reply& reply, std::size_t jobs) {
  auto codes = integers_reply(id, reply);
  if (!codes) return unexpected(std::move(codes.error()));
  if (codes->size() != jobs) return unexpected(bad_reply(id, "not one status per job", reply));
  std::vector<Status> out;
  out.reserve(jobs);
  for (std::int64_t code : *codes) {
    auto s = status_of(id, code, statuses, reply);
    if (!s) return unexpected(std::move(s.error()));
    out.push_back(*s);
  }
  return out;
}

// A {status, version} reply: a documented status and the version the write left (the
// definition changes of constraints and schedules).
template <class Status>
struct Written {
  Status status;
  std::int64_t version = 0;
};

template <class Status, std::size_t N>
Decoded<Written<Status>> written_reply(ScriptId id, const std::array<Status, N>& statuses,
                                       const Reply& reply) {
  auto n = integers_reply(id, reply, 2);
  if (!n) return unexpected(std::move(n.error()));
  auto status = status_of(id, (*n)[0], statuses, reply);
  if (!status) return unexpected(std::move(status.error()));
  return Written<Status>{*status, (*n)[1]};
}

}  // namespace jq::redis::bindings
