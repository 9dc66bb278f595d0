#!lua flags=allow-oom
--[[ unholdJobs: wakes up to `n` of the jobs a pair holds in this shard, oldest first (a wake
  order of admitJobs' side: releaseLeases, wakeConstraints or ackWake, lua/lib/
  preamble_2_order_wakes.lua). Each goes to the front of its ready list with its old stamp (it
  keeps its turn) and is announced to every master; its admission is asked again when a
  scheduler reaches it, and it is held again if it still may not start (no attempt is counted
  either way). The caller then reports the answer to ackWake. Waking an empty pair, or twice,
  is harmless: a lost or repeated order costs nothing but the call.
  Memory: runs while Redis is over maxmemory (allow-oom): held jobs move to their ready lists;
          nothing is added.
  KEYS[1] jobs prefix of the shard (record buckets, see the preamble)
  KEYS[2] ready prefix of the shard (the queue of name N = KEYS[2] .. N)
  KEYS[3] held prefix of the shard (lua/lib/preamble_1_holds_of.lua)
  ARGV[1] events channel: announce_ready for every job woken
  ARGV[2] the shard (its number, for the announcements)
  ARGV[3] the constraint's name
  ARGV[4] the key (the pair is name#key)
  ARGV[5] n: the most jobs to wake
  ARGV[6] bound: wake only jobs whose ready stamp (µs) is at most this; -1 for no bound
  Returns: {woken, oldest, settled, at}: the jobs made ready; the ready stamp (µs) of the oldest
           job the pair still holds here, -1 when none; the refused jobs holdJobs settled here
           for the pair since the last wake (the count starts again at 0); and when this ran, in
           µs of this node's clock (TIME), so ackWake can tell a late report from a newer one
           (two orders for one shard may be acked out of order).
]]
local woken, oldest, settled, at =
  unhold_pair(KEYS[1], KEYS[2], holds_of(KEYS[3]), ARGV[1], ARGV[2], ARGV[3], ARGV[4],
              tonumber(ARGV[5]), tonumber(ARGV[6]))
return {woken, oldest, settled, at}
