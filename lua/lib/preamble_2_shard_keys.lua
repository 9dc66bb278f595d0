-- Shared by the scripts (prepended at build time); takes no KEYS or ARGV of its own.
-- The keys of shard `shard` that waking a held job touches, built as src/redis/keys.cpp builds
-- them (shard_key): <p>:{<shard>}:<suffix>.
local function shard_keys(cx, shard)
  local base = cx.key_prefix .. ':{' .. shard .. '}:'
  return {jobs = base .. 'jobs:', ready_prefix = base .. 'ready:', counts = base .. 'counts'}
end
