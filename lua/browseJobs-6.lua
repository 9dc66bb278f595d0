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
  Each page scans at most 10000 entries: a `name` with few jobs among many of other names may
  come up short.
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
           (MessagePack).
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

local function zset_page(key, state_number, descending)
  local out, found = {}, 0
  local offset = 0
  local from = cursor_score and ARGV[5] or (descending and '+inf' or '-inf')
  local to = descending and '-inf' or '+inf'
  while found < limit and scanned < max_scanned do
    local batch
    if descending then
      batch = rcall('ZRANGE', key, from, to, 'BYSCORE', 'REV', 'LIMIT', offset, chunk, 'WITHSCORES')
    else
      batch = rcall('ZRANGE', key, from, to, 'BYSCORE', 'LIMIT', offset, chunk, 'WITHSCORES')
    end
    if #batch == 0 then break end
    for i = 1, #batch, 2 do
      local field, score = batch[i], tonumber(batch[i + 1])
      if after_cursor(score, field, descending) then
        local raw, record = read_record(field)
        if record and wanted(record, state_number) then
          out[#out + 1] = score
          out[#out + 1] = field
          out[#out + 1] = raw
          found = found + 1
          if found == limit then break end
        end
      end
    end
    offset = offset + #batch / 2
    scanned = scanned + #batch / 2
  end
  return out
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

local function queued_page()
  local candidates = {}
  local of_names = name ~= '' and {name} or rcall('SMEMBERS', names)
  for _, n in ipairs(of_names) do
    local queue = ready_prefix .. n
    local taken = 0
    local from = cursor_score and ARGV[5] or '-inf'
    for _, priority in ipairs(rcall('ZRANGE', queue, from, '+inf', 'BYSCORE')) do
      if taken >= limit or scanned >= max_scanned then break end
      local list = ready_list(queue, priority)
      local p = tonumber(priority)
      local index = 0
      if p == cursor_score then index = bisect(list, cursor_member) end
      while taken < limit and scanned < max_scanned do
        local members = rcall('LRANGE', list, index, index + chunk - 1)
        if #members == 0 then break end
        for _, member in ipairs(members) do
          local field = string.sub(member, 10)
          local raw, record = read_record(field)
          if record and record[R_READY_STAMP] == string.sub(member, 1, 9) and
              wanted(record, S_QUEUED) and after_cursor(p, member, false) then
            candidates[#candidates + 1] = {p, member, raw}
            taken = taken + 1
            if taken == limit then break end
          end
        end
        index = index + #members
        scanned = scanned + #members
      end
    end
  end
  table.sort(candidates, function(a, b)
    if a[1] ~= b[1] then return a[1] < b[1] end
    return bytes_less(a[2], b[2])
  end)
  local out = {}
  for i = 1, math.min(limit, #candidates) do
    local c = candidates[i]
    out[#out + 1] = c[1]
    out[#out + 1] = c[2]
    out[#out + 1] = c[3]
  end
  return out
end

if state == 'queued' then return queued_page() end
if state == 'scheduled' then return zset_page(scheduled, S_SCHEDULED, false) end
if state == 'running' then return zset_page(inflight, S_RUNNING, false) end
return zset_page(dead, S_DEAD, true)
