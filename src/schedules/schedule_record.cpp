#include "src/schedules/schedule_record.hpp"

#include <charconv>

#include <msgpack.hpp>

#include "src/store/msgpack_values.hpp"

namespace jq::schedules {
namespace {

using store::as_int;
using store::as_string;

// The value of `key` in a map object; null when absent.
const msgpack::object* find(const msgpack::object& map, std::string_view key) {
  for (std::uint32_t i = 0; i < map.via.map.size; ++i) {
    const msgpack::object_kv& kv = map.via.map.ptr[i];
    if (kv.key.type == msgpack::type::STR &&
        std::string_view(kv.key.via.str.ptr, kv.key.via.str.size) == key) {
      return &kv.val;
    }
  }
  return nullptr;
}

std::int64_t int_at(const msgpack::object& map, std::string_view key) {
  const msgpack::object* v = find(map, key);
  return v ? as_int(*v) : 0;
}

std::string string_at(const msgpack::object& map, std::string_view key) {
  const msgpack::object* v = find(map, key);
  return v ? as_string(*v) : std::string();
}

std::optional<MoveIntent> intent_at(const msgpack::object& map) {
  const msgpack::object* to = find(map, "to");
  if (!to || to->type != msgpack::type::MAP) return std::nullopt;
  return MoveIntent{static_cast<int>(int_at(*to, "shard")), int_at(*to, "token"),
                    string_at(*to, "def"), int_at(*to, "anchor"), int_at(*to, "next")};
}

std::optional<RecordStatus> status_of(std::string_view text) {
  if (text == "active") return RecordStatus::active;
  if (text == "leaving") return RecordStatus::leaving;
  if (text == "gone") return RecordStatus::gone;
  return std::nullopt;
}

template <class Int>
bool parse_int(std::string_view text, Int& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size();
}

}  // namespace

std::optional<ScheduleRecord> decode_schedule_record(std::string_view packed) {
  try {
    msgpack::object_handle handle = msgpack::unpack(packed.data(), packed.size());
    const msgpack::object& m = handle.get();
    if (m.type != msgpack::type::MAP) return std::nullopt;
    const auto status = status_of(string_at(m, "status"));
    if (!status) return std::nullopt;
    ScheduleRecord r;
    r.status = *status;
    r.token = int_at(m, "token");
    r.version = int_at(m, "version");
    r.definition = string_at(m, "def");
    r.anchor_ms = int_at(m, "anchor");
    r.next_ms = int_at(m, "next");
    r.last_run_ms = int_at(m, "last_run");
    r.last_job_id = string_at(m, "last_job");
    r.runs = int_at(m, "runs");
    r.skipped = int_at(m, "skipped");
    r.missed = int_at(m, "missed");
    r.duplicates = int_at(m, "duplicates");
    if (r.status == RecordStatus::leaving) r.to = intent_at(m);
    return r;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string encode_carried(const ScheduleRecord& r) {
  msgpack::sbuffer out;
  msgpack::packer<msgpack::sbuffer> pk(out);
  pk.pack_map(6);
  pk.pack(std::string_view("last_run"));
  pk.pack(r.last_run_ms);
  pk.pack(std::string_view("last_job"));
  pk.pack(r.last_job_id);
  pk.pack(std::string_view("runs"));
  pk.pack(r.runs);
  pk.pack(std::string_view("skipped"));
  pk.pack(r.skipped);
  pk.pack(std::string_view("missed"));
  pk.pack(r.missed);
  pk.pack(std::string_view("duplicates"));
  pk.pack(r.duplicates);
  return std::string(out.data(), out.size());
}

std::optional<Claim> parse_claim(std::string_view text) {
  std::string_view parts[4];
  std::size_t n = 0;
  while (!text.empty() && n < 4) {
    const auto space = text.find(' ');
    parts[n++] = text.substr(0, space);
    text = space == std::string_view::npos ? std::string_view{} : text.substr(space + 1);
  }
  if (!text.empty() || (n != 2 && n != 4)) return std::nullopt;
  Claim c;
  if (!parse_int(parts[0], c.shard) || !parse_int(parts[1], c.token)) return std::nullopt;
  if (n == 4) {
    int from = 0;
    if (!parse_int(parts[2], from) || !parse_int(parts[3], c.from_token)) return std::nullopt;
    c.from_shard = from;
  }
  return c;
}

std::string format_claim(const Claim& c) {
  std::string out = std::to_string(c.shard) + " " + std::to_string(c.token);
  if (c.from_shard) out += " " + std::to_string(*c.from_shard) + " " + std::to_string(c.from_token);
  return out;
}

bool claim_names(const std::optional<Claim>& claim, int shard, std::int64_t token) {
  return claim && claim->shard == shard && claim->token == token;
}

}  // namespace jq::schedules
