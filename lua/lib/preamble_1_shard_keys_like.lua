-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
--[[ The keys of any shard, named from one shard's: src/redis/keys.cpp names every shard's keys
  alike, only the hash tag ({<shard>}) differs. For the scripts that reach every shard, which
  they may only when one Redis holds every key (the joined steps, lua/lib/preamble_5_run_wakes.lua).
  jobs, ready, held: one shard's jobs, ready and held prefixes; channel: its events channel
  Returns a function of a shard's number: {jobs, ready, held = holds_of(...), channel}, named once
  per script run.
]]
local function shard_keys_like(jobs, ready, held, channel)
  local function retag(own, s)
    return (string.gsub(own, '{%d+}(:[^{}]*)$', '{' .. s .. '}%1'))
  end
  local named = {}
  return function(s)
    local k = named[s]
    if not k then
      k = {jobs = retag(jobs, s), ready = retag(ready, s), held = holds_of(retag(held, s)),
           channel = retag(channel, s)}
      named[s] = k
    end
    return k
  end
end
