-- wrk script shared by benchmarks/knative-target.py and benchmarks/k6-local.
-- Does what the k6 checks of benchmarks/k6/primed.js do (status 200, non-empty body) and prints
-- one machine-readable line at the end:
--   WRK_RESULT {"requests":N,"duration_us":N,"mean_us":N,"p50_us":N,...,"not_200":N,"empty":N,
--               "stdev_us":N,"quantiles_us":[min, p1, p2, ..., p99, max]}
-- quantiles_us is the latency distribution itself (101 points, from wrk's histogram): what
-- benchmarks/knative-single-pod.py hands the model as a pod's service time.
-- Each wrk thread has its own Lua state: counters live per thread and are summed in done().
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  not_200 = 0
  empty = 0
end

function response(status, headers, body)
  if status ~= 200 then
    not_200 = not_200 + 1
  elseif body == nil or #body == 0 then
    empty = empty + 1
  end
end

function done(summary, latency, requests)
  local bad, blank = 0, 0
  for _, t in ipairs(threads) do
    bad = bad + t:get("not_200")
    blank = blank + t:get("empty")
  end
  local e = summary.errors
  local q = {latency.min}
  for p = 1, 99 do
    q[#q + 1] = latency:percentile(p)
  end
  q[#q + 1] = latency.max
  io.write(string.format(
    'WRK_RESULT {"requests":%d,"duration_us":%d,"mean_us":%.1f,"p50_us":%d,"p95_us":%d,' ..
    '"p99_us":%d,"max_us":%d,"connect_errors":%d,"read_errors":%d,"write_errors":%d,' ..
    '"timeouts":%d,"not_200":%d,"empty":%d,"stdev_us":%.1f,"quantiles_us":[%s]}\n',
    summary.requests, summary.duration, latency.mean, latency:percentile(50),
    latency:percentile(95), latency:percentile(99), latency.max, e.connect, e.read, e.write,
    e.timeout, bad, blank, latency.stdev, table.concat(q, ",")))
end
