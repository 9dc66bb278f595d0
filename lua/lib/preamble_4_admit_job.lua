-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
--[[ Whether every constraint a job matched lets it start now, and if so takes them all at once:
  a lease per pair (constraint, key) until the attempt's deadline (a lease that outlives a dead
  master stops counting by itself: running = ZCOUNT now +inf) and, for a rate, one step of the
  pair's GCRA theoretical arrival time (tat). All of a job's constraints or none, in one step
  under {c}: exact across masters. A pair's held jobs go first, in every shard: a job younger
  than the oldest one the pair holds in any shard (held_shards) waits behind it; when the pair
  has room all the same (a wake that was lost or is still on its way), the pair is due now.
  A refused job is counted where the wakes will look for it: its shard goes into the pair's
  held_shards with the job's stamp (LT), the refusal is counted per shard (refusals: ackWake
  waits for the shard to have settled it, lua/lib/preamble_1_holds_of.lua, before it lets the
  shard go; not when the steps are joined, cx.joined: the job is held in the same step) and the
  pair's key into held_keys of its constraint. When it waits for a rate, the
  due time goes into wake_due and is announced ("s <due_ms>": promoters call wakeConstraints
  then); for a full concurrency limit, the earliest deadline of the pair's leases goes into
  wake_due, so a slot whose release was lost (its master stopped) still wakes the pair.
  Used by admitJobs (under {c} alone, on a cluster) and by reserveJobs (in the same step as the
  reservation, when one Redis holds every key).
  ad       {cx = constraint_context(...), channel = the {c} events channel, started = {}}; what
           started counts (constraint -> jobs) goes to the counters with admitted_counts(ad)
  shard    the job's shard; lease: the attempt's name, "<shard>-<field>:<attempt>"
  stamp    the job's ready stamp (µs), deadline: its attempt's deadline (ms), both in decimal
           digits (lua/lib/preamble.lua, digits)
  cons     its constraints, {name1, key1, ...} as in R_CONSTRAINTS
  Returns 0 admitted (its leases and rate steps taken), or i > 0: refused by its i-th pair
  (cons[2i - 1], cons[2i]), nothing taken.
]]
-- A refused job's hold may still land in its shard until its attempt is reaped; after that
-- ackWake stops waiting for it (a hold lost with its master).
local SETTLE_MS = 10000

-- Whether pair (name, key) keeps a job of `shard` with ready stamp `stamp` from starting.
local function admission_refuses(ad, limits, ck, name, key, stamp)
  local cx = ad.cx
  if limits.paused then return true end
  -- Its own shard too: reserveJobs compared, but another reservation of the queue may have had
  -- an older job refused since. A woken job has the stamp its shard is listed at: it passes.
  -- (Asked without scores in the answer: Redis 7.0 writes each with %.17g.)
  local held_shards = cx.c .. 'held_shards:' .. ck
  if rcall('ZRANGEBYSCORE', held_shards, '-inf', '(' .. stamp, 'LIMIT', '0', '1')[1] then
    -- Older jobs are held while the pair has room: a wake was lost or has not landed (or the
    -- entry is stale). The pair is due now, so they go first and this job after them.
    if room(cx, name, key, 1) > 0 then pair_due(cx, ck, cx.now, ad.channel) end
    return true
  end
  if limits.concurrency then
    local leases = cx.c .. 'lease:' .. ck
    if rcall('ZCOUNT', leases, cx.now_s, '+inf') >= limits.concurrency then
      local soonest = rcall('ZRANGEBYSCORE', leases, cx.now_s, '+inf', 'WITHSCORES', 'LIMIT', '0',
                            '1')
      rcall('ZADD', cx.c .. 'wake_due', 'LT', soonest[2], ck)
      return true
    end
  end
  if limits.emission_ms then
    local tat = load_tat(cx, ck, limits) or cx.now
    local allowed_at = tat - limits.burst * limits.emission_ms
    if allowed_at > cx.now then
      pair_due(cx, ck, math.ceil(allowed_at), ad.channel)
      return true
    end
  end
  return false
end

local function admission_note_refusal(cx, name, key, shard, stamp, deadline)
  local ck = name .. '#' .. key
  rcall('ZADD', cx.c .. 'held_shards:' .. ck, 'LT', stamp, shard)
  -- Joined, the job is held in this same step: no hold is on its way to be waited for.
  if not cx.joined then
    local refusals = cx.c .. 'refusals:' .. ck
    -- The shard's first refusal on its way sets how long the shard is waited for. A later one
    -- must not push that back: a hold lost with its master keeps the shard listed at its older
    -- stamp, so the pair's younger jobs, woken, are refused again and again, and each refusal
    -- would put off the end of the wait for the lost one for good.
    if rcall('HINCRBY', refusals, shard, '1') == 1 then
      rcall('HSET', refusals, 'until:' .. shard, tonumber(deadline) + SETTLE_MS)
    end
  end
  rcall('SADD', cx.c .. 'held_keys:' .. name, key)
end

local function admission_take(ad, limits, name, key, lease, deadline)
  local cx = ad.cx
  local ck = name .. '#' .. key
  rcall('ZADD', cx.c .. 'lease:' .. ck, deadline, lease)
  rcall('SADD', cx.c .. 'lease_keys:' .. name, key)
  ad.started[name] = (ad.started[name] or 0) + 1
  if limits.emission_ms then
    local tat = load_tat(cx, ck, limits) or cx.now
    tat = math.max(tat, cx.now) + limits.emission_ms
    store_tat(cx, ck, tat, limits)
    -- Jobs still held for the pair get their turn when its next start is allowed.
    if rcall('EXISTS', cx.c .. 'held_shards:' .. ck) == 1 then
      pair_due(cx, ck, math.ceil(tat - limits.burst * limits.emission_ms), ad.channel)
    end
  end
end

local function admit_job(ad, shard, lease, stamp, deadline, cons)
  for i = 1, #cons, 2 do
    local limits = constraint_limits(ad.cx, cons[i])
    if limits and admission_refuses(ad, limits, cons[i] .. '#' .. cons[i + 1], cons[i],
                                    cons[i + 1], stamp) then
      admission_note_refusal(ad.cx, cons[i], cons[i + 1], shard, stamp, deadline)
      return (i + 1) / 2
    end
  end
  for i = 1, #cons, 2 do
    local limits = constraint_limits(ad.cx, cons[i])
    if limits then admission_take(ad, limits, cons[i], cons[i + 1], lease, deadline) end
  end
  return 0
end

-- The jobs admit_job started, into the constraints' counters (started:<name>).
local function admitted_counts(ad)
  for name, n in pairs(ad.started) do
    rcall('HINCRBY', ad.cx.c .. 'counters', 'started:' .. name, digits(n))
  end
end
