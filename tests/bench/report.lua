-- wrk: print one machine-readable line (requests/s, p99 ms, errors).
function done(summary, latency, requests)
	local secs = summary.duration / 1e6
	local errors = summary.errors.status + summary.errors.connect +
	    summary.errors.read + summary.errors.write + summary.errors.timeout
	io.write(string.format("RESULT %.0f %.2f %d\n",
	    summary.requests / secs, latency:percentile(99) / 1000, errors))
end
