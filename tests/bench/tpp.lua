-- wrk: signed account-list requests from a pool pre-signed by
-- tests/bench/tpp.sh (TPP_POOL: one request per line, "Name: value"
-- headers separated by tabs, each with its own x-request-id). Thread n of
-- N takes lines n, n+N, ...; a thread that runs out wraps around, which
-- the service answers 400 (replayed x-request-id): the errors column shows
-- it, and tpp.sh sizes the pool so that it does not happen.
local pool = os.getenv("TPP_POOL")
local path = os.getenv("AIS_PATH")
local token = os.getenv("AIS_TOKEN")
local nthreads = tonumber(os.getenv("TPP_THREADS") or "2")
local counter = 0
local threads = {}
local reqs = {}
n400, n401, nother = 0, 0, 0
local next_req = 1

function setup(thread)
	counter = counter + 1
	thread:set("tid", counter)
	threads[counter] = thread
end

-- Non-200 answers by status, so that a failing pool shows what failed.
function response(status, headers, body)
	if status == 400 then
		if n400 == 0 then
			io.stderr:write("first 400: " .. (body or "") .. "\n")
		end
		n400 = n400 + 1
	elseif status == 401 then
		n401 = n401 + 1
	elseif status ~= 200 then
		nother = nother + 1
	end
end

function init(args)
	local i = 0
	for line in io.lines(pool) do
		if i % nthreads == (tid - 1) then
			local h = {
				["Authorization"] = "Bearer " .. token,
				["Content-Type"] = "application/json",
			}
			for field in string.gmatch(line, "[^\t]+") do
				local k, v = string.match(field, "^([^:]+): (.*)$")
				h[k] = v
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
local report_done = done
function done(summary, latency, requests)
	local a, b, c = 0, 0, 0
	for _, t in ipairs(threads) do
		a = a + t:get("n400")
		b = b + t:get("n401")
		c = c + t:get("nother")
	end
	if a + b + c > 0 then
		io.stderr:write(string.format("non-200: %d x 400, %d x 401, " ..
		    "%d other\n", a, b, c))
	end
	report_done(summary, latency, requests)
end
