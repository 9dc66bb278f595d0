-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
--[[ What a job that ends for good (succeeded, dead, cancelled) lets go of: its unique claim
  (unless it gave it up when it started), and its place in its ordering key's line, whose next
  job then enters the queue. The line (<order prefix><ordering_key>, a list of fields in push
  order) holds the head, which is ready, scheduled or running, then the jobs waiting behind it.
  k     keys of the shard: {jobs, ready_prefix, scheduled, counts, unique, order}
  opts  {now_ms, channel, shard}
]]
local function finish_for_good(k, opts, field, record)
  release_unique(k.unique, record, field)
  local ordering_key = record[R_ORDERING_KEY]
  if ordering_key == '' then return end
  local line = k.order .. ordering_key
  if rcall('LINDEX', line, '0') ~= field then
    rcall('LREM', line, '1', field)  -- one waiting behind, cancelled
    return
  end
  rcall('LPOP', line)
  -- A field without a queued record should not be in a line; it is dropped, not started.
  while true do
    local next_field = rcall('LINDEX', line, '0')
    if not next_field then return end
    local next_record = load_record(k.jobs, next_field)
    if next_record and next_record[R_STATE] == S_QUEUED then
      enter_queue(k, opts, next_field, next_record)
      return
    end
    rcall('LPOP', line)
  end
end
