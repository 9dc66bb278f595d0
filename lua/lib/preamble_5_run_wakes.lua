-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
--[[ Runs wake orders in this step, when one Redis holds every key (the joined steps, cx.joined):
  each as unholdJobs then ackWake would run it (unhold_pair in its shard, then ack_wake under
  {c}), and the orders those hand on, until none is left. On one Redis every step of a
  hand-off runs this way (completeJobs, releaseLeases, wakeConstraints), so no report and no
  hold of a separate call is ever on its way, and what a step sees of a shard is its truth:
  ack_wake keeps none of the records that make separate steps exact. One call runs at most
  MAX_WAKES orders waking at most MAX_WOKEN jobs; the pairs of the orders left are due now
  (wake_due, announced on `channel`): wakeConstraints goes on with them.
  orders   five values each (name, key, shard, n, bound), as order_wakes gives them
  keys_of  a function of a shard's number: its keys (lua/lib/preamble_1_shard_keys_like.lua)
  channel  the {c} events channel
]]
local MAX_WAKES, MAX_WOKEN = 256, 1000
local function run_wakes(cx, orders, keys_of, channel)
  local run, woken_here = 0, 0
  while #orders > 0 do
    local more = {}
    for i = 1, #orders, 5 do
      local name, key, s, n, bound = orders[i], orders[i + 1], orders[i + 2], orders[i + 3],
                                     orders[i + 4]
      if run >= MAX_WAKES or woken_here >= MAX_WOKEN then
        pair_due(cx, name .. '#' .. key, cx.now, channel)
      else
        run = run + 1
        local k = keys_of(s)
        local woken, _, _, _, oldest =
          unhold_pair(k.jobs, k.ready, k.held, k.channel, s, name, key, n, bound, true)
        woken_here = woken_here + woken
        ack_wake(cx, name, key, s, n, woken, oldest or -1, 0, 0, channel, more)
      end
    end
    orders = more
  end
end
