// k6 load scenario for primed on a cluster (k6 itself is not installed on the build machines;
// benchmarks/k6-local.py runs the same scenario locally with wrk).
//
//   k6 run -e BASE_URL=http://primed-static.default.<domain> benchmarks/k6/primed.js
//   k6 run -e BASE_URL=... -e STAGE=30s benchmarks/k6/primed.js     # shorter stages
//
// Stages: ramp to 50 virtual users over 2 minutes, then to 100, then to 200, then hold 200; each
// user sends GET /example back to back (no think time, like wrk's connections), so the number of
// users is the number of requests in flight: what Knative's concurrency autoscaler counts.
// Checks: status 200 and a non-empty body. The thresholds make `k6 run` exit non-zero when more
// than 1 % of checks fail or p95 exceeds the 250 ms objective the autoscaling target was
// derived for (docs/knative.md).
import http from 'k6/http';
import { check } from 'k6';

const BASE_URL = (__ENV.BASE_URL || 'http://localhost:8080').replace(/\/$/, '');
const STAGE = __ENV.STAGE || '2m';

export const options = {
  stages: [
    { duration: STAGE, target: 50 },
    { duration: STAGE, target: 100 },
    { duration: STAGE, target: 200 },
    { duration: STAGE, target: 200 },
  ],
  thresholds: {
    checks: ['rate>0.99'],
    http_req_duration: ['p(95)<250'],
  },
  summaryTrendStats: ['avg', 'med', 'p(95)', 'p(99)', 'max'],
};

export default function () {
  const res = http.get(`${BASE_URL}/example`, { tags: { name: 'example' } });
  check(res, {
    'status is 200': (r) => r.status === 200,
    'body is not empty': (r) => typeof r.body === 'string' && r.body.length > 0,
  });
}
