-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
--[[ Stores one new job that is ready at once, as pushJobs stores each job of a batch: refused
  when its (name, unique_key) claim is held by a live job; else its claim is taken, it joins
  its ordering key's line (waiting, counted as ready, when another job is ahead of it) or its
  ready list, and the shard's seq, names, counts and pushed move on; a ready job is announced.
  k     keys of the shard: {stats, jobs, names, ready_prefix, counts, unique, order}
  opts  {now_ms, stamp (base62 µs, 9 characters), channel, shard, traceparent ('' none)}
  job   as new_record takes it, plus unique_for_ms
  Returns the new job's field; or nil and the field of the job holding the claim.
]]
local function store_job(k, opts, job)
  local claim
  if job.unique_key ~= '' then
    claim = unique_claim(k.unique, job.name, job.unique_key, job.ordering_key)
    -- A claim whose holder is gone or dead (it should have been let go) is free.
    local holder = claim_holder(k.unique, k.jobs, job.name, job.unique_key, job.ordering_key)
    local held = holder and load_record(k.jobs, holder)
    if held and held[R_STATE] ~= S_DEAD then return nil, holder end
  end
  local field = base62(rcall('HINCRBY', k.stats, 'seq', '1'))
  if claim then rcall('SET', claim, field, 'PX', job.unique_for_ms) end
  local blocked_by = ''
  if job.ordering_key ~= '' and rcall('RPUSH', k.order .. job.ordering_key, field) > 1 then
    blocked_by = 'ordering_key'
  end
  local bucket, slot = record_at(k.jobs, field)
  rcall('HSET', bucket, slot, pack_record(new_record(job, S_QUEUED, opts.now_ms, opts.stamp,
    opts.traceparent, blocked_by)))
  rcall('SADD', k.names, job.name)
  count_add(k.counts, 'ready', job.name, 1)
  rcall('HINCRBY', k.stats, 'pushed', '1')
  if blocked_by == '' then
    local member = opts.stamp .. field
    make_ready(k.ready_prefix .. job.name, job.priority, {member})
    announce_ready(opts.channel, opts.shard, job.name, job.priority, member)
  end
  return field
end
