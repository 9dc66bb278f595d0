-- Shared by the scripts (prepended at build time); takes no KEYS or ARGV of its own.
--[[ What the scripts that start or end attempts need to apply constraints (contract:
  "Constraints"): the definitions hash, the prefix of the constraints' state keys, the key prefix
  the shards' keys are built from, the time and the events channel. The state of one key of one
  constraint lives at <state prefix><kind>:<name>#<key> (src/redis/keys.hpp): a name cannot hold
  '#'. Jobs held back by a constraint can sit in any shard, so waking one builds its shard's keys
  here, as keys.cpp does (shard_key): on one Redis that is any key; on Redis Cluster these
  scripts would cross slots (issue 15).
  defs       <p>:{c}:constraints (name -> definition, MessagePack)
  state      <p>:{c}:
  key_prefix <p>
]]
local function constraint_context(defs, state, key_prefix, now_ms, channel)
  return {defs = defs, c = state, key_prefix = key_prefix, now = now_ms, channel = channel,
          cache = {}}
end
