#!lua flags=no-writes
--[[ browseJobs: one page of the jobs of one shard in one state, in the order GET /v1/jobs lists
  them, after a cursor. Changes nothing.
  Orders: queued by (priority, ready member) ascending, the member being the job's stamp and
  field, which is the order reserveJobs takes them in (a cancelled job's leftover member is
  skipped); scheduled by (due ms, field) and running by (deadline ms, field) ascending; dead by
  (failure ms, field) descending. Ties across shards go by shard number, so a cursor is a whole
  position (sort score, member, shard). A ready list is in stamp order but for masters whose
  clocks differ; the cursor's place in it is found by bisection, good enough for a browser (the
  contract allows a job that moved between pages to be on neither or on both).
  Only jobs that can be chosen are queued here: those held by a constraint or behind their
  ordering key are not in a ready list and are not listed.
  Members compare by their bytes (bytes_less), as Redis orders equal scores and as the master
  compares cursors, whatever the locale redis-server runs in.
  Each page looks at most at about 10000 entries (and, for queued jobs, at the first entry of
  every name): when that budget runs out before `limit` jobs were found, the reply ends with the
  last position looked at, up to which every entry of the shard was looked at and none after it;
  the master ends the page there and gives it as the next cursor, so a `name` with few jobs
  among many of other names takes more pages, never skips any.
  Memory: reads only (no-writes), so it runs while Redis is over maxmemory.
  KEYS[1] names set of the shard (job names seen)
  KEYS[2] ready prefix of the shard: the queue of name N is KEYS[2] .. N
  KEYS[3] scheduled zset of the shard (field, score = due ms)
  KEYS[4] inflight zset of the shard (field, score = deadline ms)
  KEYS[5] dead zset of the shard (field, score = failure ms)
  KEYS[6] jobs prefix of the shard (record buckets, see the preamble)
  ARGV[1] state: queued | scheduled | running | dead
  ARGV[2] the name, "" for any
  ARGV[3] limit: the most jobs to return
  ARGV[4] this shard's number
  ARGV[5] cursor score (priority for queued, ms otherwise), "" for the first page
  ARGV[6] cursor member (queued: stamp .. field; otherwise the field)
  ARGV[7] cursor shard
  Returns: {score1, member1, record1, score2, ...}: up to `limit` jobs in order, records as stored
           (MessagePack); when the budget ran out first, then {reached score, reached member}
           (so the length is 2 more than a multiple of 3).
]]
local names, ready_prefix, scheduled, inflight, dead, jobs =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local state, name, limit, shard = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local cursor_score, cursor_member, cursor_shard = tonumber(ARGV[5]), ARGV[6], tonumber(ARGV[7])
local max_scanned, chunk = 10000, 100
local scanned = 0

-- Whether (score, member) of this shard comes after the cursor in ascending order (descending:
-- before it, which is after it in the listing's order).
local function after_cursor(score, member, descending)
  if not cursor_score then return true end
  if score ~= cursor_score then
    if descending then return score < cursor_score end
    return score > cursor_score
  end
  if member ~= cursor_member then
    if descending then return bytes_less(member, cursor_member) end
    return bytes_less(cursor_member, member)
  end
  if descending then return shard < cursor_shard end
  return shard > cursor_shard
end

-- The record as stored (MessagePack, what the page returns) and unpacked; nil when it is gone.
-- Slots 1-13 are in every record, so the checks below need no padding (load_record).
local function read_record(field)
  local raw = rcall('HGET', record_at(jobs, field))
  if not raw then return nil end
  return raw, cmsgpack.unpack(raw)
end

local function wanted(record, state_number)
  return record[R_STATE] == state_number and (name == '' or record[R_NAME] == name)
end

-- Whether position (score a, member a) comes before (score b, member b) in ascending order.
local function position_less(sa, ma, sb, mb)
  if sa ~= sb then return sa < sb end
  return bytes_less(ma, mb)
end

-- Each state's page appends its jobs to `out` (score, member, record) and, when the scan budget
-- ran out before `limit` jobs were found, returns the last position it looked at: every entry
-- of this shard up to it was looked at, none after it. The master then ends the page there, so
-- that no job of this shard is skipped for those of others that come later.

-- Where the scan of the zset starts: the first entry after the cursor, found by bisection
-- among the entries of the cursor's score (Redis orders them by their bytes), so that no budget
-- goes to what the pages before listed however many jobs share a score (a delayed batch).
local function zset_start(key, descending)
  if not cursor_score then return 0 end
  local low, high
  if descending then
    low = rcall('ZCOUNT', key, '(' .. ARGV[5], '+inf')
    high = rcall('ZCOUNT', key, ARGV[5], '+inf')
  else
    low = rcall('ZCOUNT', key, '-inf', '(' .. ARGV[5])
    high = rcall('ZCOUNT', key, '-inf', ARGV[5])
  end
  while low < high do
    local mid = math.floor((low + high) / 2)
    local at = descending and rcall('ZRANGE', key, mid, mid, 'REV') or rcall('ZRANGE', key, mid, mid)
    if not at[1] or after_cursor(cursor_score, at[1], descending) then
      high = mid
    else
      low = mid + 1
    end
  end
  return low
end

local function zset_page(out, key, state_number, descending)
  local found, index = 0, zset_start(key, descending)
  local last_score, last_member
  while found < limit do
    if scanned >= max_scanned then return last_score, last_member end
    local batch
    if descending then
      batch = rcall('ZRANGE', key, index, index + chunk - 1, 'REV', 'WITHSCORES')
    else
      batch = rcall('ZRANGE', key, index, index + chunk - 1, 'WITHSCORES')
    end
    if #batch == 0 then return nil end
    for i = 1, #batch, 2 do
      local field, score = batch[i], tonumber(batch[i + 1])
      last_score, last_member = score, field
      scanned = scanned + 1
      if after_cursor(score, field, descending) then
        local raw, record = read_record(field)
        if record and wanted(record, state_number) then
          out[#out + 1] = score
          out[#out + 1] = field
          out[#out + 1] = raw
          found = found + 1
          if found == limit then return nil end
        end
      end
    end
    index = index + #batch / 2
  end
  return nil
end

-- The first index of `list` whose member comes after `member` (the list nearly sorted).
local function bisect(list, member)
  local low, high = 0, rcall('LLEN', list)
  while low < high do
    local mid = math.floor((low + high) / 2)
    if not bytes_less(member, rcall('LINDEX', list, mid)) then low = mid + 1 else high = mid end
  end
  return low
end

-- A name's first entry after the cursor: {priority, member, index, priorities, queue}, or nil.
local function head_of(n)
  local queue = ready_prefix .. n
  local priorities = rcall('ZRANGE', queue, cursor_score and ARGV[5] or '-inf', '+inf', 'BYSCORE')
  for i, priority in ipairs(priorities) do
    local p = tonumber(priority)
    local list = ready_list(queue, priority)
    local index = (p == cursor_score) and bisect(list, cursor_member) or 0
    local member = rcall('LINDEX', list, index)
    if member then
      return {p = p, member = member, index = index, at = i, priorities = priorities, queue = queue}
    end
  end
  return nil
end

-- The entry `member` of priority `p`: a candidate when it is a queued job of the listing.
local function look_at(candidates, p, member)
  local field = string.sub(member, 10)
  local raw, record = read_record(field)
  if record and record[R_READY_STAMP] == string.sub(member, 1, 9) and
      wanted(record, S_QUEUED) and after_cursor(p, member, false) then
    candidates[#candidates + 1] = {p, member, raw}
    return true
  end
  return false
end

-- Up to `limit` candidates of one name, from its head on; whether the budget ran out first, and
-- the last entry looked at (nil when it ran out before the first).
local function scan_name(candidates, head)
  local taken = 0
  local last_p, last_member
  for i = head.at, #head.priorities do
    local priority = head.priorities[i]
    local p = tonumber(priority)
    local list = ready_list(head.queue, priority)
    local index = (i == head.at) and head.index or 0
    while true do
      if scanned >= max_scanned then return true, last_p, last_member end
      local members = rcall('LRANGE', list, index, index + chunk - 1)
      if #members == 0 then break end
      for _, member in ipairs(members) do
        scanned = scanned + 1
        last_p, last_member = p, member
        if look_at(candidates, p, member) then
          taken = taken + 1
          if taken == limit then return false end
        end
      end
      index = index + #members
    end
  end
  return false
end

-- Names in the order of their first entries, so that the budget goes to the front of the
-- listing; when it runs out, each name not scanned yet has its first entry looked at, and the
-- scan counts as having reached the earliest of those and of where the cut name stopped.
local function queued_page(out)
  local heads = {}
  for _, n in ipairs(name ~= '' and {name} or rcall('SMEMBERS', names)) do
    local head = head_of(n)
    if head then heads[#heads + 1] = head end
  end
  table.sort(heads, function(a, b) return position_less(a.p, a.member, b.p, b.member) end)
  local candidates = {}
  local reached_p, reached_member
  for k, head in ipairs(heads) do
    local cut, p, member = scan_name(candidates, head)
    if cut then
      reached_p, reached_member = p, member
      -- This name's head too when the budget ran out before it was looked at.
      for j = (p and k + 1 or k), #heads do
        local other = heads[j]
        look_at(candidates, other.p, other.member)
        if not reached_p or position_less(other.p, other.member, reached_p, reached_member) then
          reached_p, reached_member = other.p, other.member
        end
      end
      break
    end
  end
  table.sort(candidates, function(a, b) return position_less(a[1], a[2], b[1], b[2]) end)
  for i = 1, math.min(limit, #candidates) do
    local c = candidates[i]
    out[#out + 1] = c[1]
    out[#out + 1] = c[2]
    out[#out + 1] = c[3]
  end
  return reached_p, reached_member
end

local out = {}
local reached_score, reached_member
if state == 'queued' then
  reached_score, reached_member = queued_page(out)
elseif state == 'scheduled' then
  reached_score, reached_member = zset_page(out, scheduled, S_SCHEDULED, false)
elseif state == 'running' then
  reached_score, reached_member = zset_page(out, inflight, S_RUNNING, false)
else
  reached_score, reached_member = zset_page(out, dead, S_DEAD, true)
end
if reached_score then
  out[#out + 1] = reached_score
  out[#out + 1] = reached_member
end
return out
