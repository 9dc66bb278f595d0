#!lua flags=allow-oom
--[[ admitJobs: decides, for the candidates one reservation took in a shard (reserveJobs), whether
  every constraint each matched lets it start now, and if so takes them all at once: a lease per
  pair (constraint, key) until the attempt's deadline (a lease that outlives a dead master stops
  counting by itself: running = ZCOUNT now +inf) and, for a rate, one step of the pair's GCRA
  theoretical arrival time (tat). All of a job's constraints or none, in this one step, under
  {c} alone: exact across masters. A pair's held jobs go first, in every shard: a job younger
  than the oldest one the pair holds in any shard (held_shards) waits behind it; when the pair
  has room all the same (a wake that was lost or is still on its way), the pair is due now.
  A refused job is counted where the wakes will look for it: its shard goes into the pair's
  held_shards with the job's stamp (LT), the refusal is counted per shard (refusals: ackWake
  waits for holdJobs to have settled it before it lets the shard go) and the pair's key into
  held_keys of its constraint. When it waits for a rate, the due time goes into wake_due and is
  announced ("s <due_ms>": promoters call wakeConstraints then); for a full concurrency limit,
  the earliest deadline of the pair's leases goes into wake_due, so a slot whose release was lost
  (its master stopped) still wakes the pair.
  Memory: runs while Redis is over maxmemory (allow-oom): a lease per admitted job, the refusals'
          entries; dispatching the jobs already stored is how memory comes back.
  KEYS[1] constraint defs: the definitions hash (name -> MessagePack)
  KEYS[2] constraint state prefix (lua/lib/preamble_1_constraint_context.lua)
  ARGV[1] now (ms since the epoch)
  ARGV[2] events channel: "s <due_ms>" when a pair's rate holds jobs until then
  ARGV[3..] five per job: its shard, its lease (the attempt's name, "<shard>-<field>:<attempt>"),
            its ready stamp (9 base62 characters, µs), its attempt's deadline (ms), its
            constraints (MessagePack [name1, key1, ...], as in R_CONSTRAINTS)
  Returns: one integer per job, in order: 0 admitted (its leases and rate steps taken); i > 0
           refused by its i-th constraint (pair i of R_CONSTRAINTS), nothing taken.
]]
local cx = constraint_context(KEYS[1], KEYS[2], tonumber(ARGV[1]))
local now, channel = cx.now, ARGV[2]
local wake_due = cx.c .. 'wake_due'
-- A refused job's hold may still land in its shard until its attempt is reaped; after that
-- ackWake stops waiting for it (a hold lost with its master).
local SETTLE_MS = 10000
local started, out = {}, {}

-- Why pair (name, key) does not let a job of `shard` with ready stamp `stamp` start; nil if it does.
local function refuses(limits, ck, name, key, shard, stamp)
  if limits.paused then return true end
  -- Its own shard too: reserveJobs compared, but another reservation of the queue may have had
  -- an older job refused since. A woken job has the stamp its shard is listed at: it passes.
  local first = rcall('ZRANGE', cx.c .. 'held_shards:' .. ck, 0, 1, 'WITHSCORES')
  for j = 1, #first, 2 do
    if tonumber(first[j + 1]) < stamp then
      -- Older jobs are held while the pair has room: a wake was lost or has not landed (or the
      -- entry is stale). The pair is due now, so they go first and this job after them.
      if room(cx, name, key, 1) > 0 then pair_due(cx, ck, now, channel) end
      return true
    end
  end
  if limits.concurrency then
    local leases = cx.c .. 'lease:' .. ck
    if rcall('ZCOUNT', leases, now, '+inf') >= limits.concurrency then
      local soonest = rcall('ZRANGEBYSCORE', leases, now, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
      rcall('ZADD', wake_due, 'LT', soonest[2], ck)
      return true
    end
  end
  if limits.emission_ms then
    local tat = tonumber(rcall('GET', cx.c .. 'tat:' .. ck)) or now
    local allowed_at = tat - limits.burst * limits.emission_ms
    if allowed_at > now then
      pair_due(cx, ck, math.ceil(allowed_at), channel)
      return true
    end
  end
  return false
end

local function note_refusal(name, key, shard, stamp, deadline)
  local ck = name .. '#' .. key
  rcall('ZADD', cx.c .. 'held_shards:' .. ck, 'LT', stamp, shard)
  local refusals = cx.c .. 'refusals:' .. ck
  rcall('HINCRBY', refusals, shard, 1)
  if (tonumber(rcall('HGET', refusals, 'until')) or 0) < deadline + SETTLE_MS then
    rcall('HSET', refusals, 'until', deadline + SETTLE_MS)
  end
  rcall('SADD', cx.c .. 'held_keys:' .. name, key)
end

local function take(limits, name, key, lease, deadline)
  local ck = name .. '#' .. key
  rcall('ZADD', cx.c .. 'lease:' .. ck, deadline, lease)
  rcall('SADD', cx.c .. 'lease_keys:' .. name, key)
  started[name] = (started[name] or 0) + 1
  if limits.emission_ms then
    local tat_key = cx.c .. 'tat:' .. ck
    local tat = math.max(tonumber(rcall('GET', tat_key)) or now, now) + limits.emission_ms
    -- Past tat + burst steps the key is as good as new: the key may go.
    local keep_ms = math.ceil(tat - now + limits.burst * limits.emission_ms) + 1
    rcall('SET', tat_key, string.format('%.3f', tat), 'PX', keep_ms)
    -- Jobs still held for the pair get their turn when its next start is allowed.
    if rcall('EXISTS', cx.c .. 'held_shards:' .. ck) == 1 then
      pair_due(cx, ck, math.ceil(tat - limits.burst * limits.emission_ms), channel)
    end
  end
end

for a = 3, #ARGV, 5 do
  local shard, lease = ARGV[a], ARGV[a + 1]
  local stamp, deadline = base62_decode(ARGV[a + 2]), tonumber(ARGV[a + 3])
  local cons = cmsgpack.unpack(ARGV[a + 4])
  local refused = 0
  for i = 1, #cons, 2 do
    local limits = constraint_limits(cx, cons[i])
    if limits and refuses(limits, cons[i] .. '#' .. cons[i + 1], cons[i], cons[i + 1], shard,
                                 stamp) then
      refused = i
      break
    end
  end
  if refused > 0 then
    note_refusal(cons[refused], cons[refused + 1], shard, stamp, deadline)
    out[#out + 1] = (refused + 1) / 2
  else
    for i = 1, #cons, 2 do
      local limits = constraint_limits(cx, cons[i])
      if limits then take(limits, cons[i], cons[i + 1], lease, deadline) end
    end
    out[#out + 1] = 0
  end
end
for name, n in pairs(started) do rcall('HINCRBY', cx.c .. 'counters', 'started:' .. name, n) end
return out
