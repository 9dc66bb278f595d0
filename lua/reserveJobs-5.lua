--[[ reserveJobs: hands the best ready jobs of one name to a dispatcher, moving them to in-flight
  with their deadline and counting the attempt, all in one step (a job is never only in a
  master's memory). The scheduler compared the heads of several queues and bounds the batch by
  the next-best head elsewhere, so it does not take jobs that another queue should go first for.
  A queued job keeps its R_READY_MEMBER: releaseJob puts it back in its old place with it.
  KEYS[1] jobs hash of the shard
  KEYS[2] inflight zset of the shard (field, score = deadline ms)
  KEYS[3] ready zset of the name
  KEYS[4] counts hash of the shard (running:<name> += jobs taken)
  KEYS[5] stats hash of the shard (dispatched += jobs taken)
  ARGV[1] now (ms since the epoch); deadline = now + the job's timeout
  ARGV[2] the most jobs to take (>= 1)
  ARGV[3] bound priority, "" for no bound
  ARGV[4] bound member: only jobs that sort before (ARGV[3], ARGV[4]) are taken; the bound itself
          is not
  ARGV[5] the name (of KEYS[3])
  Returns: {head_member, head_priority, field1, record1, field2, record2, ...}: the queue's
           head after the reservation ('' and '' when it is empty), which the scheduler keeps
           instead of reading it again, then the jobs taken in ready order, records
           (MessagePack) as stored after the update; no jobs when nothing is ready within the
           bound.
]]
local jobs, inflight, ready, counts, stats = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local now, max = tonumber(ARGV[1]), tonumber(ARGV[2])
local bound_priority, bound_member = tonumber(ARGV[3]), ARGV[4]
local name = ARGV[5]

local function before_bound(priority, member)
  if not bound_priority then return true end
  if priority ~= bound_priority then return priority < bound_priority end
  return bytes_less(member, bound_member)
end

-- Takes the job of `member` if its record is queued; a member without one is dropped (it
-- should not exist, and leaving it would block the head of the queue).
local function take(member)
  rcall('ZREM', ready, member)
  local field = string.sub(member, 10)
  local record = load_record(jobs, field)
  if not record or record[R_STATE] ~= S_QUEUED then return nil end
  record[R_STATE] = S_RUNNING
  record[R_ATTEMPTS] = record[R_ATTEMPTS] + 1
  local packed = cmsgpack.pack(record)
  rcall('HSET', jobs, field, packed)
  rcall('ZADD', inflight, now + record[R_TIMEOUT_MS], field)
  return field, packed
end

local out, taken = {'', ''}, 0
local more = true
-- Usually one pass; another only when dropped members left room. Only scores up to the bound's
-- are read: with priorities, most of a queue usually lies beyond it.
local max_score = bound_priority or '+inf'
while more and taken < max do
  local heads = rcall('ZRANGEBYSCORE', ready, '-inf', max_score, 'WITHSCORES', 'LIMIT', 0,
                      max - taken)
  more = #heads > 0
  for i = 1, #heads, 2 do
    if not before_bound(tonumber(heads[i + 1]), heads[i]) then
      more = false
      break
    end
    local field, packed = take(heads[i])
    if field then
      taken = taken + 1
      out[#out + 1] = field
      out[#out + 1] = packed
    end
  end
end
local head = rcall('ZRANGE', ready, 0, 0, 'WITHSCORES')
if #head == 2 then
  out[1], out[2] = head[1], head[2]
end
if taken > 0 then
  count_add(counts, 'running', name, taken)
  rcall('HINCRBY', stats, 'dispatched', taken)
end
return out
