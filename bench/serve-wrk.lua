-- wrk script for scripts/bench-serve.sh: the request paths come from a file, one per line.
-- Arguments after `--`: PATHS_FILE MODE THREADS [TRACE_DIR], MODE being "once" (each thread requests its share of
-- the paths once, then stops: a cold run with every output new) or "loop" (threads cycle through the paths).
-- With TRACE_DIR ("once" only), each thread writes TRACE_DIR/thread-N.txt with one line
-- "thread n-th_request_on_its_connection path_index start_ns end_ns status" per response (CLOCK_MONOTONIC), for finding where a cold run's slowest requests wait: join the path index with
-- `imago serve --log-format json`'s "stages" (BENCHMARKS.md, branch serve6).
local count = 0
local threads = {}

function setup(thread)
  thread:set("id", count)
  count = count + 1
  table.insert(threads, thread)
end

-- Monotonic nanoseconds through LuaJIT's ffi (Lua's own clocks are CPU time or whole seconds). Read when a thread
-- starts and ends, and twice per request when tracing. It replaced `io.popen("date +%s%N")`: wrk runs each thread's
-- init() on its main thread after starting the threads before it, so the first thread's requests were under way
-- while 31 more forks of wrk (and execs of date) ran on the same two cores, some 130-165 ms of start-up charged to
-- the server's time (BENCHMARKS.md, stop 28).
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } serve_wrk_timespec;
int clock_gettime(int clk, serve_wrk_timespec *ts);
]]
local timespec = ffi.new("serve_wrk_timespec")
local function mono()
  ffi.C.clock_gettime(1, timespec)
  return tonumber(timespec.tv_sec) * 1e9 + tonumber(timespec.tv_nsec)
end
local now = mono

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
  tracedir = args[4]
  if tracedir then log = {} end
  started = now()
  finished = started
end

function request()
  if index > #paths then index = id + 1 end
  local path = paths[index]
  if tracedir then
    traced_index = index
    traced_start = mono()
  end
  index = index + step
  return wrk.format("GET", path)
end

function response(status, headers, body)
  received = received + 1
  if tracedir then
    log[#log + 1] = string.format("%d %d %d %.0f %.0f %d", id, received, traced_index, traced_start, mono(), status)
  end
  if once and received >= mine then
    if tracedir then
      local f = io.open(tracedir .. "/thread-" .. id .. ".txt", "w")
      f:write(table.concat(log, "\n"), "\n")
      f:close()
    end
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
