-- benchmarks/lib/wrk_report.lua - wrk done() hook: one machine-readable line with exact
-- percentiles from wrk's own latency histogram (microseconds), so p95 is measured, not
-- interpolated from --latency's fixed 50/75/90/99 list. Parsed by benchmarks/lib/primedlab/spawn.py (wrk_stats).
done = function(summary, latency, requests)
   local e = summary.errors
   io.write(string.format(
      "WRKSTAT requests=%d duration_us=%d bytes=%d connect=%d read=%d write=%d status=%d timeout=%d " ..
      "p50_us=%d p90_us=%d p95_us=%d p99_us=%d max_us=%d mean_us=%.1f\n",
      summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
      latency:percentile(50), latency:percentile(90), latency:percentile(95), latency:percentile(99),
      latency.max, latency.mean))
end
