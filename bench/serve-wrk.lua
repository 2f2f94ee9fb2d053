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
end

function request()
  if index > #paths then index = id + 1 end
  local path = paths[index]
  index = index + step
  return wrk.format("GET", path)
end

function response(status, headers, body)
  received = received + 1
  if once and received >= mine then wrk.thread:stop() end
end

function done(summary, latency, requests)
  io.write(string.format(
    "RESULT requests=%d errors=%d seconds=%.3f rps=%.1f p50_ms=%.1f p99_ms=%.1f max_ms=%.1f\n",
    summary.requests, summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write
      + summary.errors.timeout,
    summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000))
end
