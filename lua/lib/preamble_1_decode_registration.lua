-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
-- A worker's registration JSON as a table ({url, names, concurrency, headers, ttl_ms,
-- registered_at_ms, expires_at_ms}), or nil when it is not a JSON object (a bug: callers then
-- treat the registration as if it had none of those fields).
local function decode_registration(json)
  local ok, registration = pcall(cjson.decode, json)
  if ok and type(registration) == 'table' then return registration end
  return nil
end
