-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
-- Tells the schedulers of every master that a job became ready in a queue and may be its new
-- head: "p <name> <shard> <priority> <member>" on the events channel. A scheduler that knows
-- the queue's head keeps the better of the two, so it needs no Redis read to see the new work.
-- (One string.format: a number in a concatenation is written with %.14g, which costs more.)
local function announce_ready(channel, shard, name, priority, member)
  rcall('SPUBLISH', channel, string.format('p %s %s %d %s', name, shard, priority, member))
end
