-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
-- Gathers the arguments of one command per key, so a batch of jobs costs one call per key (a
-- record bucket, the inflight zset) instead of one per job: each redis.call has a fixed cost
-- that dominated scripts handling many jobs. `add` appends arguments for a key; `send` issues
-- them, in chunks that stay far below Lua's limit on unpack().
--   local w = batched('HSET'); w.add(bucket, slot, packed); ...; w.send()
local function batched(command)
  local keys, args = {}, {}
  local chunk = 1000
  -- One value (a member) or two (score and member, field and value): named, not `...`, which
  -- cost a select() per value and per job.
  local function add(key, x, y)
    local a = args[key]
    if not a then
      a = {}
      args[key] = a
      keys[#keys + 1] = key
    end
    local n = #a + 1
    a[n] = x
    if y ~= nil then a[n + 1] = y end
  end
  local function send()
    for _, key in ipairs(keys) do
      local a = args[key]
      for first = 1, #a, chunk do
        rcall(command, key, unpack(a, first, math.min(first + chunk - 1, #a)))
      end
    end
    keys, args = {}, {}
  end
  return {add = add, send = send}
end
