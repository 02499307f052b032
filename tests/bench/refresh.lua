-- wrk: one refresh grant per request, each with its own refresh token
-- (tokens rotate, so a token is good once). TOKENS names the file; thread
-- n of N takes tokens n, n+N, ... A pool that runs out sends
-- "exhausted", answered 400: the run then fails (report.lua).
-- TOKEN_PATH the token endpoint (default psd2gate's). REUSE=1 where
-- tokens are not rotated (the oidc-provider reference, a psd2gate client
-- without rotation): a thread that reaches the end of its tokens starts
-- again from its first.
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
	first = tid + 1
	idx = first
	reuse = os.getenv("REUSE") == "1"
	path = os.getenv("TOKEN_PATH") or "/auth/oauth/token"
	headers = {
		["Content-Type"] = "application/x-www-form-urlencoded",
		["Authorization"] = "Basic " .. os.getenv("BASIC"),
	}
end

function request()
	if reuse and tokens[idx] == nil then
		idx = first
	end
	local t = tokens[idx] or "exhausted"
	idx = idx + step
	return wrk.format("POST", path, headers,
	    "grant_type=refresh_token&refresh_token=" .. t)
end

dofile("tests/bench/report.lua")
