-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
-- Removes worker `id`'s registration and its url's entry. The url entry goes only while it still
-- names this id; an unreadable registration is removed all the same, and its url entry is then
-- left to the next registration of that url.
local function forget_worker(workers_key, urls_key, id, json)
  rcall('HDEL', workers_key, id)
  local registration = decode_registration(json)
  local url = registration and registration.url
  if type(url) == 'string' and rcall('HGET', urls_key, url) == id then
    rcall('HDEL', urls_key, url)
  end
end
