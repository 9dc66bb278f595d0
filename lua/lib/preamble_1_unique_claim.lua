-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
-- The claim of a unique job (contract: "Unique jobs"): a string key holding the field of the job
-- that holds it, with a TTL of the job's unique_for. It lives in the shard the job's unique_key
-- routes to (src/store/job_routing.cpp), so every push of one (name, unique_key) meets it in one
-- script, whichever master runs it. A space cannot occur in a name, so the key is unambiguous.
local function unique_claim(unique_prefix, name, unique_key)
  return unique_prefix .. name .. ' ' .. unique_key
end
