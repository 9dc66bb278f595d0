-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
--[[ The record of schedule `name` in the schedules hash of the shard it lives in, or nil. A
  MessagePack map (src/schedules/schedule_record.hpp reads it):
    status    'active' (it ticks here), 'leaving' (it moves to another shard: `to`) or 'gone'
              (a tombstone: only `token` is kept)
    token     the claim's token of this record (src/schedules/schedule_store.hpp): the tokens of
              one name only grow, so a write for an older token than the one here is refused
    version   moves on with every change of the definition (compare-and-set of changes and ticks)
    def       the definition (api::encode_schedule)
    anchor    ms: `every` counts from here when there is no start_at
    next      ms of the next tick (0: none, paused or ended); leaving: when any master finishes
              the move if the one that began it has not
    last_run, last_job   ms of the tick of the last job made (0 none) and its id ('' none)
    runs, skipped, missed, duplicates   what its ticks did (skipped: overlap)
    to        leaving only: {shard, token, def, anchor, next} of the record it becomes there
]]
local function load_schedule(schedules, name)
  local raw = rcall('HGET', schedules, name)
  return raw and cmsgpack.unpack(raw)
end
