-- wrk at a fixed rate (Debian has no wrk2): the pool of pool.lua, sent on
-- a schedule. Each thread sends RATE / WRK_THREADS requests a second:
-- every request takes the thread's next slot (one slot per interval) and
-- waits for it (delay()), whichever connection is free, so a slow answer
-- does not slow the schedule (as long as a connection is free; CONNS
-- well above RATE x latency). Latency is wrk's, from the send.
-- Prints: PACED <2xx per second> <p50 ms> <p99 ms> <non-2xx> <socket errors>
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } psd2_paced_ts;
int clock_gettime(int, psd2_paced_ts *);
]]
local ts = ffi.new("psd2_paced_ts")
local function now_ms()
	ffi.C.clock_gettime(1, ts)
	return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
end

dofile("tests/bench/pool.lua")

local interval = tonumber(os.getenv("WRK_THREADS") or "2") * 1000 /
    tonumber(os.getenv("RATE"))
local next_slot = nil

function delay()
	local now = now_ms()
	if next_slot == nil then
		next_slot = now
	end
	local wait = next_slot - now
	next_slot = next_slot + interval
	if wait < 0 then
		return 0
	end
	return math.floor(wait)
end

local report_done = done
function done(summary, latency, requests)
	report_done(summary, latency, requests)
	local secs = summary.duration / 1e6
	local ok, bad = 0, 0
	for _, t in ipairs(paced_threads) do
		ok = ok + t:get("n2xx")
		bad = bad + t:get("nother")
	end
	local sock = summary.errors.connect + summary.errors.read +
	    summary.errors.write + summary.errors.timeout
	io.write(string.format("PACED %.0f %.2f %.2f %d %d\n", ok / secs,
	    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
	    bad, sock))
end

-- report.lua keeps its threads local: keep our own list.
paced_threads = {}
local report_setup = setup
function setup(thread)
	table.insert(paced_threads, thread)
	report_setup(thread)
end
