-- bench/serve-wrk.lua's "once" mode plus a per-request trace, for finding where a cold run's slowest requests wait:
-- arguments after `--`: PATHS_FILE once THREADS TRACE_DIR; each thread writes TRACE_DIR/thread-N.txt with one line
-- "thread n-th_request_on_its_connection path_index start_ns end_ns status" per response (CLOCK_MONOTONIC, through
-- LuaJIT's ffi). Join the path index with `imago serve --log-format json`'s "stages" (BENCHMARKS.md, branch serve6).
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } serve6_timespec;
int clock_gettime(int clk, serve6_timespec *ts);
]]
local ts = ffi.new("serve6_timespec")
local function mono()
  ffi.C.clock_gettime(1, ts)
  return tonumber(ts.tv_sec) * 1e9 + tonumber(ts.tv_nsec)
end
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
  step = tonumber(args[3])
  tracedir = args[4]
  index = id + 1
  mine = 0
  for _ = id + 1, #paths, step do mine = mine + 1 end
  received = 0
  started = mono()
  finished = started
  log = {}
  cur_start = 0
  cur_index = 0
end
function request()
  local path = paths[index]
  cur_index = index
  cur_start = mono()
  index = index + step
  if index > #paths then index = id + 1 end
  return wrk.format("GET", path)
end
function response(status, headers, body)
  local t = mono()
  received = received + 1
  log[#log + 1] = string.format("%d %d %d %.0f %.0f %d", id, received, cur_index, cur_start, t, status)
  if received >= mine then
    finished = t
    local f = io.open(tracedir .. "/thread-" .. id .. ".txt", "w")
    f:write(table.concat(log, "\n"), "\n")
    f:close()
    wrk.thread:stop()
  end
end
function done(summary, latency, requests)
  local first, last
  for _, thread in ipairs(threads) do
    local s, f = thread:get("started"), thread:get("finished")
    if first == nil or s < first then first = s end
    if last == nil or f > last then last = f end
  end
  local seconds = (last - first) / 1e9
  io.write(string.format(
    "RESULT requests=%d errors=%d seconds=%.3f rps=%.1f p50_ms=%.1f p99_ms=%.1f max_ms=%.1f\n",
    summary.requests, summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write
      + summary.errors.timeout,
    seconds, summary.requests / seconds,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000))
end
