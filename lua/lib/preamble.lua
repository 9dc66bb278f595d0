-- Shared preamble: the top of the function library that holds every script
-- (cmake/embed_lua.cmake); takes no KEYS or ARGV of its own.
--
-- This file comes first (records, states, rcall, base62); then, in sorted file-name order, every
-- preamble_<level>_<function>.lua (one helper per file); then the scripts, each a function. A
-- helper of level n uses only helpers of lower levels (a Lua local must be defined before use).
-- All of it runs once, when Redis loads the library, where neither redis.call nor Lua's library
-- functions (tostring, string.*) can be called: constants are written out, and rcall is bound
-- by each function as it starts. Nothing here may keep state from one call to the next.
--
-- A job's record is one MessagePack array (cmsgpack) in a small hash of its shard. Records are
-- bucketed by the job's field (a 9-character base62 sequence number, also the id's suffix): the
-- hash <jobs prefix><first 8 characters> holds up to 62 records, each under the field's last
-- character. Hashes that small stay listpack-encoded in Redis (up to hash-max-listpack-entries,
-- 128 by default, of at most hash-max-listpack-value bytes, 64 by default), which costs about half
-- the memory per record of one hashtable per shard. Its slots:
local R_NAME, R_ARGUMENT, R_PRIORITY, R_MAX_RETRY, R_KEEP_RESULT, R_TIMEOUT_MS = 1, 2, 3, 4, 5, 6
local R_STATE, R_ATTEMPTS, R_ENQUEUED_AT_MS, R_READY_STAMP, R_LAST_ERROR = 7, 8, 9, 10, 11
local R_TRACEPARENT, R_RESULT = 12, 13
-- While a job runs, its result slot (written only when it finishes) holds the token of the
-- call that took it (reserveJobs, or pushJobs taking it at once): a master whose answer to that
-- call was lost finds the jobs it took by it (findReserved) and gives them back.
local R_TAKEN_BY = R_RESULT
-- Slots 14-19 came with flow control; records stored before them have 13 slots, and load_record
-- fills the missing ones with their "none" values (a table with holes would pack as a map).
-- R_UNIQUE_UNTIL: 0 finished, 1 started. R_READY_AT_MS: when a delayed job (or a retry) is due,
-- 0 for at once. R_BLOCKED_BY: '' or, for a queued job held back, 'ordering_key' (waiting behind
-- another job of its key) or the name of the constraint holding it.
-- R_CONSTRAINTS: the constraints the job matched at its push, {name1, key1, name2, key2, ...}
-- (matched by the master at the push; admitted by lua/admitJobs-2.lua), or false for none.
local R_UNIQUE_KEY, R_UNIQUE_UNTIL, R_ORDERING_KEY, R_READY_AT_MS, R_BLOCKED_BY = 14, 15, 16, 17, 18
local R_CONSTRAINTS = 19
-- Slot 20 came with schedules: R_SCHEDULE is {schedule name, scheduled_at (ISO 8601 with the
-- offset of the schedule's zone)} for a job a schedule made (fireSchedule), else false.
local R_SCHEDULE = 20
-- Slot 21 came with merged duplicates (pushJobs, on_duplicate): R_APPENDED is how many pushed
-- arguments R_ARGUMENT lists when it was made by on_duplicate append (a MessagePack array of
-- them, in push order), 0 when the argument is the one pushed value.
local R_APPENDED = 21
local R_NONE = {[14] = '', [15] = 0, [16] = '', [17] = 0, [18] = '', [19] = false, [20] = false,
                [21] = 0}
local R_SLOTS = 21
-- R_READY_STAMP: base62(µs) of when the job last became ready; its member in the ready list
-- of its name and priority is that stamp followed by its field
-- (lua/lib/preamble_1_ready_list.lua).
-- States, as src/store/job_state.hpp numbers them.
local S_QUEUED, S_SCHEDULED, S_RUNNING, S_SUCCEEDED, S_DEAD = 1, 2, 3, 4, 5
-- What a push does to the waiting job that holds its unique claim (contract: "Merging
-- duplicates"), as api::OnDuplicate numbers them.
local D_KEEP, D_REPLACE, D_APPEND = 0, 1, 2

local rcall = redis.call

-- A whole number as the decimal digits to pass it to redis.call in. Redis 7.0 writes a number
-- argument with %.17g and Lua a number in a concatenation with %.14g, each about three times
-- the cost of %d (printf_fp); constant arguments are written as strings ('0', '1') instead.
local function digits(n)
  return string.format('%d', n)
end

-- Fixed-width (9 digits) base62 in ASCII order (0-9, A-Z, a-z), so byte order equals numeric
-- order (ready members of equal priority compare by their stamps). Exact for n < 2^53. Unrolled,
-- without a table: it runs once per job pushed, and a loop filling a table cost three times as
-- much. Each digit's byte is computed: a table of them, built anew at every script call as all
-- of this preamble was before the scripts became a function library, cost a single push more
-- than the whole conversion.
local function base62(n)
  local d9 = n % 62
  n = (n - d9) / 62
  local d8 = n % 62
  n = (n - d8) / 62
  local d7 = n % 62
  n = (n - d7) / 62
  local d6 = n % 62
  n = (n - d6) / 62
  local d5 = n % 62
  n = (n - d5) / 62
  local d4 = n % 62
  n = (n - d4) / 62
  local d3 = n % 62
  n = (n - d3) / 62
  local d2 = n % 62
  local d1 = ((n - d2) / 62) % 62
  -- '0' is byte 48, 'A' 65 (digit 10), 'a' 97 (digit 36).
  return string.char(d1 + (d1 < 10 and 48 or d1 < 36 and 55 or 61),
                     d2 + (d2 < 10 and 48 or d2 < 36 and 55 or 61),
                     d3 + (d3 < 10 and 48 or d3 < 36 and 55 or 61),
                     d4 + (d4 < 10 and 48 or d4 < 36 and 55 or 61),
                     d5 + (d5 < 10 and 48 or d5 < 36 and 55 or 61),
                     d6 + (d6 < 10 and 48 or d6 < 36 and 55 or 61),
                     d7 + (d7 < 10 and 48 or d7 < 36 and 55 or 61),
                     d8 + (d8 < 10 and 48 or d8 < 36 and 55 or 61),
                     d9 + (d9 < 10 and 48 or d9 < 36 and 55 or 61))
end

-- The bucket hash and the field in it of a job's record: rcall('HGET', record_at(jobs, f)).
local function record_at(jobs_prefix, field)
  return jobs_prefix .. string.sub(field, 1, 8), string.sub(field, 9)
end

-- A plain record (13 slots, the usual one) stays as loaded: the slots it left out (14 on) read
-- as their "none" values through this metatable. Filling them in would grow its table past the
-- 16 slots made for it (a rehash), which cost more than the lookups. A longer record is filled in:
-- its table has room for every slot.
local RECORD = {__index = R_NONE}

-- The table of a record unpacked with its n slots, made to read every slot (as above).
local function whole_record(record, n)
  if n == 13 then return setmetatable(record, RECORD) end
  for i = n + 1, R_SLOTS do record[i] = R_NONE[i] end
  return record
end

local function load_record(jobs_prefix, field)
  local raw = rcall('HGET', record_at(jobs_prefix, field))
  if not raw then return nil end
  local record = cmsgpack.unpack(raw)
  return whole_record(record, #record)
end

-- MessagePack array headers for 13 to R_SLOTS elements: fixarray up to 15, then array 16. As
-- constants: computing them cannot be done while the library loads (no string.char there).
local RECORD_HEADERS = {[13] = '\157', [14] = '\158', [15] = '\159', [16] = '\220\0\16',
                        [17] = '\220\0\17', [18] = '\220\0\18', [19] = '\220\0\19',
                        [20] = '\220\0\20', [21] = '\220\0\21'}

-- How many slots a record packs into: its trailing slots (14 on) that hold their "none" value
-- are left out, and load_record and the master's decoder fill them back in: a plain job with a
-- 16-byte argument then packs in under 64 bytes, hash-max-listpack-value's default, and its
-- bucket stays a listpack.
local function packed_slots(record)
  local n = R_SLOTS
  while n > 13 and (record[n] == nil or record[n] == R_NONE[n]) do n = n - 1 end
  return n
end

-- The record packed in packed_slots(record) slots. A plain record as loaded (RECORD) is packed as
-- an array header and its slots' values one after the other, which is what packing the table
-- gives; a slot it left out up to the last kept is put in first, with the value reading it gives.
local function pack_record(record)
  local n = packed_slots(record)
  if getmetatable(record) == RECORD then
    for i = 14, n do
      if rawget(record, i) == nil then record[i] = R_NONE[i] end
    end
    return RECORD_HEADERS[n] .. cmsgpack.pack(unpack(record, 1, n))
  end
  if n == R_SLOTS then return cmsgpack.pack(record) end
  for i = n + 1, R_SLOTS do record[i] = nil end
  local packed = cmsgpack.pack(record)
  for i = n + 1, R_SLOTS do record[i] = R_NONE[i] end
  return packed
end

-- Stores the record and returns it packed.
local function save_record(jobs_prefix, field, record)
  local packed = pack_record(record)
  local key, slot = record_at(jobs_prefix, field)
  rcall('HSET', key, slot, packed)
  return packed
end
