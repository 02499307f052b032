-- wrk: AIS calls with a bearer token and a fresh x-request-id (UUID v4)
-- per request, as a TPP sends them (each one writes its replay mark and
-- its access record). AIS_TOKEN and AIS_PATH from the environment.
local token = os.getenv("AIS_TOKEN")
local path = os.getenv("AIS_PATH")
local counter = 0

function setup(thread)
	counter = counter + 1
	thread:set("tid", counter)
end

function init(args)
	math.randomseed(os.time() * 1000 + (tid or 0) * 7919)
end

local function uuid4()
	return (string.gsub("xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx", "[xy]",
	    function(c)
		local v = (c == "x") and math.random(0, 15) or math.random(8, 11)
		return string.format("%x", v)
	    end))
end

function request()
	return wrk.format("GET", path, {
		["Authorization"] = "Bearer " .. token,
		["Content-Type"] = "application/json",
		["X-Request-ID"] = uuid4(),
	})
end

dofile("tests/bench/report.lua")
