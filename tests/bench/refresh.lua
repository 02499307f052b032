-- wrk: one refresh grant per request, each with its own refresh token
-- (tokens rotate, so a token is good once). TOKENS names the file; thread
-- n of N takes tokens n, n+N, ... A pool that runs out sends
-- "exhausted", answered 400: the run then fails (report.lua).
local counter = 0

function setup(thread)
	thread:set("tid", counter)
	counter = counter + 1
end

function init(args)
	tokens = {}
	for line in io.lines(os.getenv("TOKENS")) do
		tokens[#tokens + 1] = line
	end
	step = tonumber(os.getenv("WRK_THREADS") or "2")
	idx = tid + 1
	headers = {
		["Content-Type"] = "application/x-www-form-urlencoded",
		["Authorization"] = "Basic " .. os.getenv("BASIC"),
	}
end

function request()
	local t = tokens[idx] or "exhausted"
	idx = idx + step
	return wrk.format("POST", "/auth/oauth/token", headers,
	    "grant_type=refresh_token&refresh_token=" .. t)
end

dofile("tests/bench/report.lua")
