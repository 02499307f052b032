-- wrk: one refresh grant per request, each with its own refresh token
-- (tokens rotate, so a token is good once). TOKENS names the file.
local threads = {}
local counter = 0

function setup(thread)
	thread:set("tid", counter)
	counter = counter + 1
	table.insert(threads, thread)
end

function init(args)
	tokens = {}
	for line in io.lines(os.getenv("TOKENS")) do
		tokens[#tokens + 1] = line
	end
	step = tonumber(os.getenv("THREADS") or "2")
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

-- wrk reads one script: the report comes with it.
dofile("tests/bench/report.lua")
