// Redis Cluster's hash slots: which of the 16384 slots a key belongs to. The slot is
// CRC16-XMODEM of the key modulo 16384, where a key holding "{tag}" with a non-empty tag hashes
// only the tag (the first '{' and the first '}' after it). Every key of one shard carries the
// shard's tag ("jq:{7}:inflight"), so a script's keys share one slot and one node.
#pragma once

#include <cstdint>
#include <string_view>

namespace jq::redis {

inline constexpr int kSlots = 16384;

// CRC16 with polynomial 0x1021, initial value 0, no reflection (XMODEM), as Redis uses it.
std::uint16_t crc16_xmodem(std::string_view bytes);

// The part of `key` that is hashed: the hash tag when there is one, else the whole key.
std::string_view hash_tag(std::string_view key);

// The slot of a key (also of a shard channel, for SPUBLISH/SSUBSCRIBE): 0 .. kSlots - 1.
int key_slot(std::string_view key);

}  // namespace jq::redis
