-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
-- Stores the record of schedule `name` (lua/lib/preamble_1_load_schedule.lua) and, with a
-- channel, tells every master's runner to read it again: "t <shard> <name>".
local function put_schedule(schedules, name, record, channel, shard)
  rcall('HSET', schedules, name, cmsgpack.pack(record))
  if channel then rcall('SPUBLISH', channel, 't ' .. shard .. ' ' .. name) end
end
