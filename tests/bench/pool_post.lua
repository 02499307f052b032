-- wrk: requests with a method and a body from a pool prepared by
-- tests/bench/presign_pis.py (one per line: "METHOD path", then
-- "Name: value" headers separated by tabs, the body as the pseudo-header
-- "X-Body", which is not sent as a header). As pool.lua otherwise: thread
-- n of N takes lines n, n+N, ...; a pool run out sends repeats, which the
-- service refuses (replayed x-request-id) and the run fails.
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
			local method, path, body = nil, nil, nil
			local h = {}
			for field in string.gmatch(line, "[^\t]+") do
				if method == nil then
					method, path = string.match(field, "^(%S+) (.*)$")
				else
					local k, v = string.match(field, "^([^:]+): (.*)$")
					if k == "X-Body" then
						body = v
					else
						h[k] = v
					end
				end
			end
			reqs[#reqs + 1] = wrk.format(method, path, h, body)
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
