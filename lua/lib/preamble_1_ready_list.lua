-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
-- The ready jobs of one name in a shard (its "queue", key <ready prefix><name>): per priority a
-- LIST of members readyStamp(9) .. field(9) in the order the jobs became ready, at
-- <queue>#<priority>, and at <queue> itself a zset of the priorities that have a list (score and
-- member = the priority). A list entry costs about 20 bytes where a zset member cost about 120.
-- `#` cannot occur in a name, so no list key is another name's queue.
-- A job cancelled while queued leaves its member behind (LREM would cost the list's length);
-- reserveJobs drops members whose record is not queued with the member's stamp.
local function ready_list(queue, priority)
  return queue .. '#' .. priority
end
