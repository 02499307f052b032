-- wrk: counts answers by status in every thread and prints one
-- machine-readable line at the end:
--   RESULT <2xx per second> <p99 ms> <non-2xx answers> <socket errors>
-- Only 2xx answers are throughput; any non-2xx answer or socket error
-- makes the run a failed measurement (tests/bench/lib.sh says so).
-- Scripts that define setup() keep it: it is wrapped here.
local threads = {}
local user_setup = setup
n2xx, nother = 0, 0
first_bad = nil

function setup(thread)
	table.insert(threads, thread)
	if user_setup then
		user_setup(thread)
	end
end

function response(status, headers, body)
	if status >= 200 and status < 300 then
		n2xx = n2xx + 1
	else
		nother = nother + 1
		if first_bad == nil then
			first_bad = status .. " " .. string.sub(body or "", 1, 200)
		end
	end
end

function done(summary, latency, requests)
	local secs = summary.duration / 1e6
	local ok, bad = 0, 0
	for _, t in ipairs(threads) do
		ok = ok + t:get("n2xx")
		bad = bad + t:get("nother")
		local fb = t:get("first_bad")
		if fb ~= nil then
			io.stderr:write("first non-2xx: " .. fb .. "\n")
		end
	end
	local sock = summary.errors.connect + summary.errors.read +
	    summary.errors.write + summary.errors.timeout
	io.write(string.format("RESULT %.0f %.2f %d %d\n", ok / secs,
	    latency:percentile(99) / 1000, bad, sock))
end
