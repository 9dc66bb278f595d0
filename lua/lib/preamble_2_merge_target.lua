-- Shared by the scripts (in the function library, before them); takes no KEYS or ARGV of its own.
--[[ Folds duplicate pushes (on_duplicate replace or append) into the record of the job that
  holds their unique claim and has not started (contract: "Merging duplicates"). replace takes
  the push's argument, its priority and, when the push gave one, its ready time. append adds
  the push's argument to the list R_ARGUMENT holds (R_APPENDED elements, in push order; an
  argument that was not such a list becomes its first element) and keeps the smaller priority
  and the ready time. Either way the job takes the constraints matched for the push's own
  argument and gives its claim up when it starts. Elements are kept as the bytes pushed and
  joined once, by finish(): n appends in one batch copy the list once, not n times.
  record     the job's record, changed in place
  max_bytes  the most bytes an appended list may reach
  fold(push) push = {argument (MessagePack bytes), priority, ready_at (ms, 0: not given),
             constraints (table or false), mode (D_REPLACE or D_APPEND), unique_until}; returns
             false, changing nothing, when an append finds 1000 elements or would pass
             max_bytes: a new job takes the push, and the claim, instead
  finish()   writes the joined list into R_ARGUMENT (before the record is packed)
  retimed()  whether a fold gave the job a new ready time
]]
local function merge_target(record, max_bytes)
  local parts, size = nil, 0  -- the list's elements not yet joined (or runs of them), bytes
  local retimed = false
  local function body_bytes()
    if parts then return size end
    local n = record[R_APPENDED]
    if n == 0 then return #record[R_ARGUMENT] end
    return #record[R_ARGUMENT] - #array_header(n)
  end
  local function open_list()
    if parts then return end
    local n = record[R_APPENDED]
    if n == 0 then
      parts, record[R_APPENDED] = {record[R_ARGUMENT]}, 1
    else
      parts = {string.sub(record[R_ARGUMENT], #array_header(n) + 1)}
    end
    size = #parts[1]
  end
  local function fold(push)
    if push.mode == D_APPEND then
      local n = record[R_APPENDED]
      local bytes = #array_header(math.max(n, 1) + 1) + body_bytes() + #push.argument
      if n >= 1000 or bytes > max_bytes then return false end
      open_list()
      parts[#parts + 1] = push.argument
      size = size + #push.argument
      record[R_APPENDED] = record[R_APPENDED] + 1
      record[R_PRIORITY] = math.min(record[R_PRIORITY], push.priority)
    else
      parts, size = nil, 0
      record[R_ARGUMENT], record[R_APPENDED] = push.argument, 0
      record[R_PRIORITY] = push.priority
      if push.ready_at > 0 then
        record[R_READY_AT_MS] = push.ready_at
        retimed = true
      end
    end
    record[R_CONSTRAINTS] = push.constraints
    record[R_UNIQUE_UNTIL] = push.unique_until
    return true
  end
  local function finish()
    if not parts then return end
    record[R_ARGUMENT] = array_header(record[R_APPENDED]) .. table.concat(parts)
    parts = nil
  end
  return {fold = fold, finish = finish, retimed = function() return retimed end}
end
