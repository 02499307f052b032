-- wrk: requests from a pool prepared by tests/bench/presign.py (POOL:
-- one request per line, the path then "Name: value" headers, separated
-- by tabs; each line has its own x-request-id, signed ones their own
-- signature). Thread n of N takes lines n, n+N, ...; a thread that runs
-- out starts again, which the service refuses (replayed x-request-id):
-- the run then fails, so the pool is sized above what a run can send.
local pool = os.getenv("POOL")
local nthreads = tonumber(os.getenv("WRK_THREADS") or "2")
local counter = 0
local reqs = {}
local next_req = 1

function setup(thread)
	counter = counter + 1
	thread:set("tid", counter)
end

function init(args)
	local i = 0
	for line in io.lines(pool) do
		if i % nthreads == (tid - 1) then
			local path = nil
			local h = {}
			for field in string.gmatch(line, "[^\t]+") do
				if path == nil then
					path = field
				else
					local k, v = string.match(field, "^([^:]+): (.*)$")
					h[k] = v
				end
			end
			reqs[#reqs + 1] = wrk.format("GET", path, h)
		end
		i = i + 1
	end
end

function request()
	local r = reqs[next_req]
	next_req = next_req + 1
	if next_req > #reqs then
		next_req = 1
	end
	return r
end

dofile("tests/bench/report.lua")
