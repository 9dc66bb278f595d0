-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
-- The claim of a unique job (contract: "Unique jobs"): a string key holding the field of the job
-- that holds it, with a TTL of the job's unique_for. It lives in the shard the job's routing key
-- sends it to (its ordering_key, else its unique_key: src/store/job_routing.cpp), so every push of
-- one (name, ordering_key, unique_key) meets it in one script, whichever master runs it. A
-- unique_key is unique among the jobs of one ordering_key (or of none), as README says: several
-- ordering keys share a shard, so the ordering key is part of the claim. Neither a space nor '#'
-- occurs in a name, and the ordering key goes with its length, so the key is unambiguous.
local function unique_claim(unique_prefix, name, unique_key, ordering_key)
  if ordering_key == nil or ordering_key == '' then
    return unique_prefix .. name .. ' ' .. unique_key
  end
  return unique_prefix .. name .. '#' .. #ordering_key .. ' ' .. ordering_key .. unique_key
end

-- The field of the job holding the claim of (name, ordering_key, unique_key); nil when free.
-- A job of an ordering key pushed by a master before claims named the ordering key holds its
-- claim under the name alone: found there when its own ordering key is this one.
local function claim_holder(unique_prefix, jobs, name, unique_key, ordering_key)
  local field = rcall('GET', unique_claim(unique_prefix, name, unique_key, ordering_key))
  if field or ordering_key == nil or ordering_key == '' then return field end
  field = rcall('GET', unique_claim(unique_prefix, name, unique_key))
  local record = field and load_record(jobs, field)
  if record and record[R_ORDERING_KEY] == ordering_key then return field end
  return nil
end
