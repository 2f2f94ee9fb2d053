-- wrk script for scripts/bench-serve.sh: the request paths come from a file, one per line.
-- Arguments after `--`: PATHS_FILE MODE THREADS, MODE being "once" (each thread requests its share of the
-- paths once, then stops: a cold run with every output new) or "loop" (threads cycle through the paths).
local count = 0
local threads = {}

function setup(thread)
  thread:set("id", count)
  count = count + 1
  table.insert(threads, thread)
end

-- Wall-clock nanoseconds (Lua's own clocks are CPU time or whole seconds); read twice per thread only.
local function now()
  local pipe = io.popen("date +%s%N")
  local text = pipe:read("*l")
  pipe:close()
  return tonumber(text)
end

function init(args)
  paths = {}
  for line in io.lines(args[1]) do
    if #line > 0 then paths[#paths + 1] = line end
  end
  once = args[2] == "once"
  step = tonumber(args[3])
  index = id + 1
  mine = 0
  for _ = id + 1, #paths, step do mine = mine + 1 end
  received = 0
  started = now()
  finished = started
end

function request()
  if index > #paths then index = id + 1 end
  local path = paths[index]
  index = index + step
  return wrk.format("GET", path)
end

function response(status, headers, body)
  received = received + 1
  if once and received >= mine then
    finished = now()
    wrk.thread:stop()
  end
end

function done(summary, latency, requests)
  -- A "once" run ends when its last thread has its last answer (wrk itself waits out -d): time it from the
  -- first thread's start to that answer.
  local seconds = summary.duration / 1e6
  if threads[1]:get("once") then
    local first, last
    for _, thread in ipairs(threads) do
      local s, f = thread:get("started"), thread:get("finished")
      if first == nil or s < first then first = s end
      if last == nil or f > last then last = f end
    end
    seconds = (last - first) / 1e9
  end
  io.write(string.format(
    "RESULT requests=%d errors=%d seconds=%.3f rps=%.1f p50_ms=%.1f p99_ms=%.1f max_ms=%.1f\n",
    summary.requests, summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write
      + summary.errors.timeout,
    seconds, summary.requests / seconds,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000))
end
