-- wrk script: request PATH (argument 2) with "{id}" replaced by an id drawn at random from IDS_FILE
-- (argument 1, one id a line; "-" for none). Prints one JSON summary line at the end.
--   wrk -t1 -c32 -d5s -s bench/random_ids.lua http://127.0.0.1:8000 -- ids.txt '/api/v2/puzzles/{id}'
-- Argument 3, when given and above 0, is a pause in milliseconds before each connection's next request:
-- a paced load below saturation instead of as many requests as the server can answer. wrk only paces
-- when the script has a delay() function, so it is defined only then (latency excludes the pause).
local ids = {}
local path = "/"
local counter = 0
local threads = {}

function setup(thread)
  counter = counter + 1
  thread:set("id", counter)
  table.insert(threads, thread)
end

function init(args)
  local file = args[1]
  path = args[2] or "/"
  local pause = tonumber(args[3] or "0")
  if pause > 0 then
    delay = function() return pause end
  end
  if file ~= nil and file ~= "-" then
    for line in io.lines(file) do
      if #line > 0 then ids[#ids + 1] = line end
    end
  end
  math.randomseed(os.time() * 1000 + (id or 0))
end

function request()
  if #ids > 0 then
    local p = string.gsub(path, "{id}", ids[math.random(#ids)])
    return wrk.format(nil, p)
  end
  return wrk.format(nil, path)
end

function done(summary, latency, requests)
  io.write(string.format(
    '{"requests": %d, "duration_us": %d, "bytes": %d, "p50_us": %d, "p90_us": %d, "p99_us": %d, ' ..
    '"max_us": %d, "connect_errors": %d, "read_errors": %d, "write_errors": %d, "status_errors": %d, ' ..
    '"timeouts": %d}\n',
    summary.requests, summary.duration, summary.bytes, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.max, summary.errors.connect, summary.errors.read, summary.errors.write,
    summary.errors.status, summary.errors.timeout))
end
