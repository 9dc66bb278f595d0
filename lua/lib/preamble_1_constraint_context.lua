-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
--[[ What the scripts that decide for constraints need; every key they touch is under the hash
  tag {c} (docs/REDIS.md, "Constraints"): the definitions hash, the prefix of the constraints'
  state keys and the time. A pair is one key of one constraint, "<name>#<key>" (a name cannot
  hold '#'); its state lives at <state prefix><kind>:<pair> (lease, tat, held_shards,
  refusals), a constraint's at <state prefix><kind>:<name> (lease_keys, held_keys), and
  counters and wake_due at <state prefix><kind>. Jobs are never touched here: the shards hold
  them, and the master carries what one side decides to the other (src/store/admission.hpp,
  src/store/handoff.hpp, src/store/lease_releaser.hpp).
  defs   <p>:{c}:constraints (name -> definition, MessagePack)
  state  <p>:{c}:
  joined true when the calling script runs every step of a hand-off itself (one Redis: it was
         given the shards' keys too, lua/lib/preamble_5_run_wakes.lua); false or nil otherwise
]]
local function constraint_context(defs, state, now_ms, joined)
  -- now_s: the same as an argument, formatted once.
  return {defs = defs, c = state, now = now_ms, now_s = digits(now_ms), cache = {},
          joined = joined == true, listed = {}}
end
