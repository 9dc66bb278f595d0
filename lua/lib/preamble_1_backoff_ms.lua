-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
-- Delay before the retry that follows failed attempt `attempt` (1 = the first run):
-- base * 2^(attempt-1), capped at max, then spread by +/- jitter (a fraction, 0-1) so jobs that
-- failed together do not all come back in the same millisecond. Whole milliseconds.
local function backoff_ms(attempt, base_ms, max_ms, jitter)
  local delay = math.min(base_ms * 2 ^ (attempt - 1), max_ms)
  return math.floor(delay * (1 + jitter * (2 * math.random() - 1)) + 0.5)
end
