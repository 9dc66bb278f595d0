-- Shared by the scripts (prepended at build time); takes no KEYS or ARGV of its own.
-- Shared preamble, prepended to every script at build time (cmake/embed_lua.cmake).
--
-- This file comes first in every script (records, states, rcall, base62); then, in sorted
-- file-name order, those of preamble_<level>_<function>.lua (one helper per file) the script
-- uses, directly or through another helper. A helper of level n uses only helpers of lower
-- levels (a Lua local must be defined before use).
--
-- A job's record is one MessagePack array (cmsgpack) in the shard's jobs hash, under the job's
-- field (a 9-character base62 sequence number, which is also the id's suffix). Its slots:
local R_NAME, R_ARGUMENT, R_PRIORITY, R_MAX_RETRY, R_KEEP_RESULT, R_TIMEOUT_MS = 1, 2, 3, 4, 5, 6
local R_STATE, R_ATTEMPTS, R_ENQUEUED_AT_MS, R_READY_MEMBER, R_LAST_ERROR = 7, 8, 9, 10, 11
local R_TRACEPARENT, R_RESULT = 12, 13
-- States, as src/store/job_state.hpp numbers them.
local S_QUEUED, S_SCHEDULED, S_RUNNING, S_SUCCEEDED, S_DEAD = 1, 2, 3, 4, 5

local rcall = redis.call

local B62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

-- Fixed-width base62 in ASCII order, so byte order equals numeric order (zset ties sort by
-- member). Exact for n < 2^53.
local function base62(n, width)
  local out = {}
  for i = width, 1, -1 do
    local d = n % 62
    out[i] = string.sub(B62, d + 1, d + 1)
    n = (n - d) / 62
  end
  return table.concat(out)
end

local function load_record(jobs_key, field)
  local raw = rcall('HGET', jobs_key, field)
  if not raw then return nil end
  return cmsgpack.unpack(raw)
end

local function save_record(jobs_key, field, record)
  rcall('HSET', jobs_key, field, cmsgpack.pack(record))
end
