"""knative/model/ksim.py - a Knative revision under load, simulated: pods, the metric path, the KPA.

Owns: a discrete-event simulation of one Knative Service: users (closed loop, k6's ramping VUs,
with think time) or an arrival rate (open loop: constant, step, spike, ramp), Knative's data plane
as knative/serving has it (the activator in the path only while the excess burst capacity is
negative, with its load-balancing policy per containerConcurrency; otherwise the ingress's
round-robin straight to the pods; queue-proxy's breaker in each pod: containerConcurrency slots,
a queue of 10 x containerConcurrency, 503 past it), pods serving with a service-time
distribution (FIFO over the pod's cores like primed's workers, or processor sharing like a
thread-per-request JVM), start-up (scheduling delay + container start + boot to the first 200),
the metric path (time-weighted concurrency per second, stable and panic window averages), a
decision of knative/model/kpa.py every 2 s and the KPA reconciler's bounds (min/max
scale, scale-to-zero after the grace period), and what it all cost (pod-seconds x requested CPU).
Invariants: deterministic for a seed (one random.Random for the load and the service times, one
for routing, events ordered by time then sequence); every request that arrives is answered or
refused with a 503 (a full queue-proxy queue, or the activator's queue of 10000); a pod that is
scaled away drains its requests before it stops being billed.
Standard library only; no I/O.
"""

import heapq
import math
import random
from collections import deque
from dataclasses import dataclass

from primedlab import kpa

SCRAPE_S = 1.0          # queue-proxy reports, the autoscaler scrapes: once a second (BucketSize)
DRAIN_LIMIT_S = 300.0   # after the load, the time left to answer what is in flight
# queue-proxy's breaker (pkg/queue/sharedmain/main.go, BreakerParams): containerConcurrency slots
# and a queue of 10 x containerConcurrency; past it pkg/queue/breaker.go's Maybe() fails with
# ErrRequestQueueFull and queue-proxy answers 503. containerConcurrency 0: no breaker.
QP_QUEUE_FACTOR = 10
# the activator's own breaker per revision (pkg/activator/net/throttler.go, breakerQueueDepth)
ACTIVATOR_QUEUE = 10000
# A closed-loop client without think time (wrk) hears a refusal's 503 one loopback round trip
# later and sends again; with no gap a full queue would refuse and re-send at one instant forever.
REFUSAL_RTT_S = 0.0001


def lb_policy(cc):
    """The activator's load-balancing policy for a containerConcurrency, as
    pkg/activator/net/throttler.go's newRevisionThrottler chooses it (the policies in
    pkg/activator/net/lb_policy.go): "p2c" (power of two choices, an infinite breaker) for 0,
    "first" (first available) for 1..3, "rr" (round robin) above."""
    if cc == 0:
        return "p2c"
    return "first" if cc <= 3 else "rr"


@dataclass
class Target:
    """One server as the lab measured it. service_ms_*: CPU time of one request on one core
    (mean = 1000 / the capacity of one core); discipline: "fifo" (a request runs on one worker
    from start to end, the others wait: primed) or "ps" (every request in the pod shares its
    cores: a thread per request); startup_ms: exec (or container run) to the first 200."""
    name: str
    service_ms_mean: float
    service_ms_median: float = None
    discipline: str = "fifo"
    startup_ms: float = 0.0
    containerised: bool = False
    note: str = ""
    first_answer_ms: float = None   # exec (or container run) to the first /example answer
    image_mib: float = 0.0          # what a node without the image pulls
    # the measured distribution itself, when there is one: its quantiles in ms at 0, 1/n, ..., 1
    # (min to max, evenly spaced in probability; knative-single-pod passes wrk's 101)
    service_ms_quantiles: tuple = None

    def first_extra_s(self):
        """What a new pod's first request takes beyond its service time: the first /example answer
        after the first /healthz 200 (class loading, first-call paths), 0 when not measured."""
        if self.first_answer_ms is None:
            return 0.0
        return max(0.0, self.first_answer_ms - self.startup_ms) / 1e3

    def sampler(self, rng):
        """A function giving one service time, in seconds of one core: drawn from the measured
        quantiles when there are some (linear between them), else lognormal with the measured
        median and mean (a prime search's cost is skewed: median below mean), or exponential when
        only the mean is known."""
        q = [v / 1e3 for v in self.service_ms_quantiles or ()]
        if len(q) >= 2:
            n = len(q) - 1

            def draw():
                x = rng.random() * n
                i = min(int(x), n - 1)
                return q[i] + (q[i + 1] - q[i]) * (x - i)
            return draw
        mean = self.service_ms_mean / 1e3
        med = (self.service_ms_median or 0) / 1e3
        if med <= 0:
            return lambda: rng.expovariate(1.0 / mean)
        if med >= mean:
            return lambda: med
        mu, sigma = math.log(med), math.sqrt(2 * math.log(mean / med))
        return lambda: rng.lognormvariate(mu, sigma)


@dataclass
class Service:
    """The Knative Service around the target: the shape of knative/base/service.yaml (scale 0..10, 2
    CPUs, 1 s scheduling); target and containerConcurrency default to the values it carried before
    the sweep (11, 16): callers pass the ones they model (knative-sim reads the base's own)."""
    container_concurrency: int = 16
    target: float = 11
    utilization: float = 1.0
    min_scale: int = 0
    max_scale: int = 10          # 0 = unbounded
    initial_scale: int = 1
    pod_cpus: int = 2
    scheduling_delay_s: float = 1.0
    container_start_s: float = 0.0   # added for targets measured without a container
    pull_mib_s: float = 0.0          # image pull rate of a node without the image; 0 = image present
    target_burst_capacity: float = kpa.DEFAULTS["target_burst_capacity"]
    stable_window_s: float = kpa.DEFAULTS["stable_window_s"]
    panic_window_pct: float = kpa.DEFAULTS["panic_window_percentage"]
    panic_threshold: float = kpa.DEFAULTS["panic_threshold"]
    max_scale_up_rate: float = kpa.DEFAULTS["max_scale_up_rate"]
    max_scale_down_rate: float = kpa.DEFAULTS["max_scale_down_rate"]
    scale_down_delay_s: float = kpa.DEFAULTS["scale_down_delay_s"]
    scale_to_zero_grace_s: float = kpa.DEFAULTS["scale_to_zero_grace_period_s"]
    activation_scale: int = 1
    # queue-proxy's CPU per request, ms of one core, added to each request's work on the pod's
    # CPUs (a queue-proxy sharing the pod's CPUs; 0: not counted)
    queue_proxy_cpu_ms: float = 0.0

    def decider_spec(self):
        tv, total = kpa.resolve_target(self.container_concurrency, self.target, self.utilization)
        return kpa.DeciderSpec(target_value=tv, total_value=total,
                               target_burst_capacity=self.target_burst_capacity,
                               panic_threshold=self.panic_threshold,
                               max_scale_up_rate=self.max_scale_up_rate,
                               max_scale_down_rate=self.max_scale_down_rate,
                               stable_window_s=self.stable_window_s,
                               scale_down_delay_s=self.scale_down_delay_s,
                               activation_scale=self.activation_scale, reachable=True)


class Load:
    """Closed loop: stages [(duration_s, users)] ramped linearly from 0 as k6's ramping-vus
    does; each user sends, waits for the answer, thinks (exponential, mean think_s; 0 = back to
    back, like benchmarks/k6/primed.js) and sends again until the last stage ends.
    Open loop: segments [(duration_s, rate)] of Poisson arrivals (or evenly spaced: uniform)."""

    def __init__(self, stages=None, segments=None, think_s=0.0, uniform=False):
        assert (stages is None) != (segments is None)
        self.stages, self.segments, self.think_s, self.uniform = stages, segments, think_s, uniform
        self.duration = sum(d for d, _ in (stages or segments))

    def user_changes(self):
        """[(t, +1 | -1)]: when each user starts or stops."""
        out, t0, cur = [], 0.0, 0
        for d, n in self.stages:
            if n > cur:
                out += [(t0 + d * (k - cur) / (n - cur), +1) for k in range(cur + 1, n + 1)]
            elif n < cur:
                out += [(t0 + d * (cur - k + 1) / (cur - n), -1) for k in range(cur, n, -1)]
            t0, cur = t0 + d, n
        return out

    def arrivals(self, rng):
        t0 = 0.0
        for d, rate in self.segments:
            if rate > 0:
                t = t0
                while True:
                    t += (1.0 / rate) if self.uniform else rng.expovariate(rate)
                    if t >= t0 + d:
                        break
                    yield t
            t0 += d


def seed_load(stage_s=120.0, think_s=0.0):
    """The seed's k6 scenario (benchmarks/k6/primed.js): 50, 100, 200, 200 users, one stage each."""
    return Load(stages=[(stage_s, 50), (stage_s, 100), (stage_s, 200), (stage_s, 200)], think_s=think_s)


def open_load(kind, args, uniform=False):
    """constant RATE DURATION | step RATE1 RATE2 AT DURATION | spike BASE PEAK AT LENGTH DURATION |
    ramp RATE1 RATE2 DURATION (the rate changed linearly, one-second steps)."""
    a = [float(x) for x in args]
    if kind == "constant":
        seg = [(a[1], a[0])]
    elif kind == "ramp":
        n = max(1, int(math.ceil(a[2])))
        seg = [(a[2] / n, a[0] + (a[1] - a[0]) * (k + 0.5) / n) for k in range(n)]
    elif kind == "step":
        seg = [(a[2], a[0]), (a[3] - a[2], a[1])]
    elif kind == "spike":
        seg = [(a[2], a[0]), (a[3], a[1]), (a[4] - a[2] - a[3], a[0])]
    else:
        raise ValueError("open-loop kind: constant, step, spike or ramp")
    if any(d < 0 for d, _ in seg):
        raise ValueError("open-loop times out of order: %r" % (args,))
    return Load(segments=seg, uniform=uniform)


class Req:
    __slots__ = ("t", "user", "start", "end", "pod", "cold", "buffered", "work", "rem", "status")

    def __init__(self, t, user):
        self.t, self.user = t, user
        self.start = self.end = None
        self.pod = None
        self.cold = False         # arrived while no pod was ready: waits for a start-up
        self.buffered = False     # waited in the activator for a free slot
        self.work = self.rem = 0.0
        self.status = 200         # 503: refused by a full queue (queue-proxy's or the activator's)


class Pod:
    def __init__(self, pid, created, ready_at, cores, ps):
        self.id, self.created, self.ready_at = pid, created, ready_at
        self.cores, self.ps = cores, ps
        self.state = "starting"   # starting | ready | draining | gone
        self.inflight = []        # requests holding one of queue-proxy's containerConcurrency slots
        self.qp_queue = deque()   # waiting in queue-proxy's breaker for a slot (at most 10 x cc)
        self.waiting = deque()    # fifo: admitted, waiting for a worker
        self.busy = 0             # fifo: workers running
        self.version = 0          # ps: invalidates a scheduled completion
        self.last = created       # ps: when remaining work was last brought up to date
        self.ended = None
        self.cold = False         # started by a decision (not one of the initial pods)
        self.became_ready = False
        self.first_extra = 0.0    # added to the first request it serves (first_extra_s)


class Sim:
    def __init__(self, target, service, load, seed=1, initial_pods=None):
        self.tg, self.sv, self.load = target, service, load
        self.rng = random.Random(seed)
        self.route_rng = random.Random(seed + 7919)   # the activator's power of two choices
        self.work = target.sampler(self.rng)
        self.events, self.seq, self.now = [], 0, 0.0
        self.pods, self.next_pid = [], 0
        self._ready = None                    # the ready pods in pod order; None: to be listed again
        self.queue = deque()                  # the activator's buffer
        self.reqs = []
        self.spec = service.decider_spec()
        self.cc = service.container_concurrency or 10 ** 9
        self.policy = lb_policy(service.container_concurrency)
        # a revision starts with the activator in its path (the SKS in proxy mode); each decision
        # then puts it in or takes it out by the sign of the excess burst capacity. With
        # target-burst-capacity 0 that capacity is always 0 (kpa.py, as autoscaler.go has it), so
        # a revision that starts with ready pods is served directly from the first request (the
        # first decision would take the activator out; until it, 2 s of arrivals queued there)
        n_ready = service.initial_scale if initial_pods is None else initial_pods
        self.activator_in_path = not (service.target_burst_capacity == 0 and n_ready > 0)
        self.rr = 0                           # the activator's round-robin position
        self.ingress_rr = 0                   # the ingress's, while the activator is out
        self.rejected = 0
        n0 = service.initial_scale if initial_pods is None else initial_pods
        for _ in range(n0):
            self.start_pod(ready_now=True)
        self.decider = kpa.Decider(self.spec, initial_ready_pods=n0, t_s=0.0)
        self.in_system = 0                    # requests arrived and not answered
        self.area, self.area_t = 0.0, 0.0     # integral of in_system over the current second
        self.buckets = []                     # per-second average concurrency
        self.zero_since = None
        self.timeline, self.decisions = [], []
        self.users_active = 0
        self.users_stop = 0                   # users asked to stop after their request
        self.poked = False

    # --- events ----------------------------------------------------------------------------
    def at(self, t, kind, arg=None):
        self.seq += 1
        heapq.heappush(self.events, (t, self.seq, kind, arg))

    def run(self):
        load = self.load
        if load.stages is not None:
            for t, delta in load.user_changes():
                self.at(t, "user+" if delta > 0 else "user-")
        else:
            for t in load.arrivals(self.rng):
                self.at(t, "arrive")
        self.at(SCRAPE_S, "scrape")
        self.at(kpa.TICK_S, "decide")
        while self.events:
            t, _, kind, arg = heapq.heappop(self.events)
            if kind in ("scrape", "decide") and t > load.duration and self.in_system == 0:
                continue                      # the load is over and every request answered
            if t > load.duration + DRAIN_LIMIT_S:
                break                         # what is still unanswered now is reported lost
            self.advance(t)
            getattr(self, "on_" + kind.replace("+", "_start").replace("-", "_stop"))(arg)
        self.end = max(self.now, load.duration)
        for p in self.pods:
            if p.ended is None:
                p.ended = self.end
        return self

    def advance(self, t):
        self.area += self.in_system * (t - self.area_t)
        self.area_t = self.now = t

    # --- load ------------------------------------------------------------------------------
    def on_user_start(self, _):
        self.users_active += 1
        self.arrive(self.now, user=True)

    def on_user_stop(self, _):
        self.users_stop += 1

    def on_arrive(self, _):
        self.arrive(self.now, user=False)

    def on_think(self, _):
        if self.now >= self.load.duration:
            self.users_active -= 1            # thought past the end: sends nothing more
            return
        self.arrive(self.now, user=True)

    def arrive(self, t, user):
        r = Req(t, user)
        r.work = r.rem = self.work() + self.sv.queue_proxy_cpu_ms / 1e3
        self.reqs.append(r)
        self.in_system += 1
        if not self.ready():
            r.cold = True
            if not self.live() and not self.poked:
                # at zero the activator reports its first request at once and the autoscaler
                # decides without waiting for its tick (the multiscaler's poke)
                self.poked = True
                self.at(self.now, "poke")
        ready = self.ready()
        if self.activator_in_path or not ready:
            p = None if self.queue else self.pick()     # first come, first served
            if p is not None:
                self.admit(p, r)
            elif len(self.queue) >= ACTIVATOR_QUEUE:
                self.refuse(r)
            else:
                r.buffered = True
                self.queue.append(r)
        else:
            # the ingress sends it straight to a pod, round robin, blind to the pod's load
            p = ready[self.ingress_rr % len(ready)]
            self.ingress_rr += 1
            self.to_queue_proxy(p, r)

    def to_queue_proxy(self, p, r):
        """A request reaches pod p's queue-proxy: a free slot admits it, else it waits in the
        breaker's queue, else (10 x cc already waiting) it is refused with a 503."""
        if len(p.inflight) < self.cc:
            self.admit(p, r)
        elif len(p.qp_queue) < QP_QUEUE_FACTOR * self.cc:
            r.pod = p
            p.qp_queue.append(r)
        else:
            self.refuse(r)

    def refuse(self, r):
        r.status = 503
        self.rejected += 1
        self.answered(r)

    def answered(self, r):
        r.end = self.now
        self.in_system -= 1
        if not r.user:
            return
        if self.users_stop > 0:
            self.users_stop -= 1
            self.users_active -= 1
        elif self.now < self.load.duration:
            if self.load.think_s > 0:
                self.at(self.now + self.rng.expovariate(1.0 / self.load.think_s), "think")
            elif r.status == 503:
                self.at(self.now + REFUSAL_RTT_S, "think")
            else:
                self.arrive(self.now, user=True)
        else:
            self.users_active -= 1

    # --- routing and pods --------------------------------------------------------------------
    def pick(self):
        """The activator's choice among the ready pods (in pod order, as its sorted trackers) by
        its policy (lb_policy()): the first with a free slot; round robin from after the last
        one chosen to the next with a free slot; or (no cap) the less loaded of two drawn at
        random. None when no ready pod has a free slot. A pod's load is what the activator
        sent it and is not yet answered (in its slots or queue-proxy's queue)."""
        ready = self.ready()
        if not ready:
            return None
        if self.policy == "p2c":
            if len(ready) == 1:
                return ready[0]
            a, b = self.route_rng.sample(ready, 2)
            return b if len(b.inflight) + len(b.qp_queue) < len(a.inflight) + len(a.qp_queue) else a
        free = [len(p.inflight) + len(p.qp_queue) < self.cc for p in ready]
        if self.policy == "first":
            return next((p for p, f in zip(ready, free) if f), None)
        n = len(ready)
        for k in range(n):
            i = (self.rr + k) % n
            if free[i]:
                self.rr = i + 1
                return ready[i]
        return None

    def admit(self, p, r):
        r.pod = p
        r.start = self.now
        if p.first_extra:
            r.work += p.first_extra
            r.rem += p.first_extra
            p.first_extra = 0.0
        if p.ps:
            self.ps_update(p)
            p.inflight.append(r)
            self.ps_schedule(p)
        else:
            p.inflight.append(r)
            if p.busy < p.cores:
                p.busy += 1
                self.at(self.now + r.work, "done", r)
            else:
                p.waiting.append(r)

    def ps_update(self, p):
        n = len(p.inflight)
        if n:
            rate = min(1.0, p.cores / n)
            dt = self.now - p.last
            for r in p.inflight:
                r.rem -= dt * rate
        p.last = self.now

    def ps_schedule(self, p):
        p.version += 1
        if p.inflight:
            rate = min(1.0, p.cores / len(p.inflight))
            r = min(p.inflight, key=lambda x: x.rem)
            self.at(self.now + max(0.0, r.rem) / rate, "ps_done", (p, p.version))

    def on_ps_done(self, arg):
        p, v = arg
        if v != p.version:
            return
        self.ps_update(p)
        r = min(p.inflight, key=lambda x: x.rem)
        p.inflight.remove(r)
        self.refill(p)
        self.ps_schedule(p)
        self.answered(r)

    def on_done(self, r):
        p = r.pod
        p.inflight.remove(r)
        p.busy -= 1
        if p.waiting:
            nxt = p.waiting.popleft()
            p.busy += 1
            self.at(self.now + nxt.work, "done", nxt)
        self.refill(p)
        self.answered(r)

    def refill(self, p):
        """A slot of p freed: queue-proxy's queue takes it first; then the activator sends its
        oldest requests where its policy finds a free slot."""
        while p.qp_queue and len(p.inflight) < self.cc:
            self.admit(p, p.qp_queue.popleft())
        while self.queue:
            q = self.pick()
            if q is None:
                break
            self.admit(q, self.queue.popleft())
        if p.state == "draining" and not p.inflight and not p.qp_queue:
            p.state, p.ended = "gone", self.now

    def start_pod(self, ready_now=False):
        sv, tg = self.sv, self.tg
        delay = 0.0 if ready_now else (sv.scheduling_delay_s + self.pull_s() + tg.startup_ms / 1e3 +
                                       (0.0 if tg.containerised else sv.container_start_s))
        p = Pod(self.next_pid, self.now + (0.0 if ready_now else sv.scheduling_delay_s),
                self.now + delay, sv.pod_cpus, tg.discipline == "ps")
        p.cold = not ready_now
        p.first_extra = 0.0 if ready_now else tg.first_extra_s()
        self.next_pid += 1
        self.pods.append(p)
        if ready_now:
            p.state = "ready"
            self._ready = None
        else:
            self.at(p.ready_at, "ready", p)

    def pull_s(self):
        """The image pull of a pod started now: the image's size at the pull rate, 0 when present."""
        return self.tg.image_mib / self.sv.pull_mib_s if self.sv.pull_mib_s > 0 else 0.0

    def on_ready(self, p):
        if p.state != "starting":
            return
        p.state, p.became_ready = "ready", True
        self._ready = None
        self.refill(p)

    def ready(self):
        """The ready pods, in pod order (listed again only after a pod became or stopped being ready)."""
        if self._ready is None:
            self._ready = [p for p in self.pods if p.state == "ready"]
        return self._ready

    def live(self):
        return [p for p in self.pods if p.state in ("starting", "ready")]

    def scale_to(self, n):
        live = self.live()
        for _ in range(n - len(live)):
            self.start_pod()
        if n < len(live):
            # Kubernetes removes pods that are not ready first, then the least busy
            order = sorted(live, key=lambda p: (p.state == "ready", len(p.inflight) + len(p.qp_queue), -p.id))
            for p in order[:len(live) - n]:
                if p.state == "starting":
                    p.state, p.ended = "gone", max(self.now, p.created)
                else:
                    p.state = "draining"
                    self._ready = None
                    if not p.inflight and not p.qp_queue:
                        p.state, p.ended = "gone", self.now

    # --- metrics and decisions ----------------------------------------------------------------
    def on_scrape(self, _):
        self.buckets.append(self.area / SCRAPE_S)
        self.area = 0.0
        ready = sum(p.state == "ready" for p in self.pods)
        self.timeline.append((self.now, ready, len(self.live()), len(self.queue), self.in_system,
                              self.decider.in_panic()))
        self.at(self.now + SCRAPE_S, "scrape")

    def window(self, seconds):
        n = max(1, int(round(seconds / SCRAPE_S)))
        b = self.buckets[-n:]
        return sum(b) / len(b) if b else 0.0

    def on_poke(self, _):
        self.poked = False
        if not self.live():
            self.decide(floor=self.in_system)

    def on_decide(self, _):
        self.decide()
        self.at(self.now + kpa.TICK_S, "decide")

    def decide(self, floor=0):
        sv = self.sv
        stable = max(floor, self.window(sv.stable_window_s))
        panic = max(floor, self.window(sv.stable_window_s * sv.panic_window_pct / 100.0))
        ready = sum(p.state == "ready" for p in self.pods)
        want, ebc = self.decider.scale(self.now, stable, panic, ready)
        n = want
        if sv.min_scale:
            n = max(n, sv.min_scale)
        if sv.max_scale:
            n = min(n, sv.max_scale)
        # scale to zero only after the decider has asked for zero for the grace period (the
        # activator is put in the path first; knative's scale-to-zero-grace-period)
        if n == 0:
            if self.zero_since is None:
                self.zero_since = self.now
            if self.now - self.zero_since < sv.scale_to_zero_grace_s:
                n = 1 if self.live() else 0
        else:
            self.zero_since = None
        if ebc is not None:
            # the SKS's mode (pkg/reconciler/autoscaling/kpa/kpa.go): proxy (activator in the
            # path) while the excess burst capacity is negative, serve when it is not
            self.activator_in_path = ebc < 0
        self.decisions.append({"t": self.now, "ready": ready, "stable": stable, "panic": panic,
                               "decider": want, "ebc": ebc, "applied": n, "panic_mode": self.decider.in_panic()})
        self.scale_to(n)


def pct(sorted_xs, q):
    """Nearest-rank percentile of a sorted list (None when empty). Not statistics.quantiles, which
    interpolates: the published sweep's figures are nearest-rank."""
    if not sorted_xs:
        return None
    k = max(0, min(len(sorted_xs) - 1, int(math.ceil(q / 100.0 * len(sorted_xs))) - 1))
    return sorted_xs[k]


def summarize(sim, bucket_s=10.0, since=0.0):
    """The figures of one run: overall, per latency bucket (by arrival) and per second. since:
    count only what arrived, started and was billed from then on (a warm-up left out)."""
    reqs = [r for r in sim.reqs if r.t >= since] if since else sim.reqs
    done = [r for r in reqs if r.end is not None and r.status == 200]
    refused = sum(1 for r in reqs if r.status == 503)
    lat = sorted(r.end - r.t for r in done)
    cold = sorted(r.start - r.t for r in done if r.cold)
    buf = sorted(r.start - r.t for r in done if r.buffered)
    pod_s = sum((p.ended if p.ended is not None else sim.end) - max(p.created, since) for p in sim.pods
                if (p.ended if p.ended is not None else sim.end) > max(p.created, since))
    series = []
    if done:
        by = {}
        for r in done:
            by.setdefault(int(r.t // bucket_s), []).append(r.end - r.t)
        for k in sorted(by):
            xs = sorted(by[k])
            series.append((k * bucket_s, len(xs), pct(xs, 50), pct(xs, 95), pct(xs, 99)))
    decs = sim.decisions
    return {
        "target": sim.tg.name,
        "requests": len(reqs), "answered": len(done), "errors_503": refused,
        "lost": len(reqs) - len(done) - refused,
        "duration_s": sim.load.duration,
        # answered within the load's duration, per second of it (as wrk and openloop count)
        "throughput_rps": sum(1 for r in done if r.end <= sim.load.duration) / max(sim.load.duration, 1e-9),
        "p50_ms": 1e3 * pct(lat, 50) if lat else None, "p95_ms": 1e3 * pct(lat, 95) if lat else None,
        "p99_ms": 1e3 * pct(lat, 99) if lat else None, "max_ms": 1e3 * lat[-1] if lat else None,
        "mean_ms": 1e3 * sum(lat) / len(lat) if lat else None,
        "max_pods": max([len(sim.live())] + [d["applied"] for d in decs]) if decs else len(sim.live()),
        "max_ready": max([t[1] for t in sim.timeline] or [0]),
        "pod_starts": sum(1 for p in sim.pods if p.cold and p.became_ready and p.ready_at >= since),
        "pods_created": sum(1 for p in sim.pods if p.cold),
        "cold_requests": len(cold),
        "cold_wait_p50_ms": 1e3 * pct(cold, 50) if cold else None,
        "cold_wait_max_ms": 1e3 * cold[-1] if cold else None,
        "buffered_requests": len(buf),
        "buffered_wait_p95_ms": 1e3 * pct(buf, 95) if buf else None,
        "pod_seconds": pod_s, "cpu_seconds": pod_s * sim.sv.pod_cpus,
        # the cost a team pays per unit of work: CPU-seconds billed per million answered requests
        "cpu_s_per_million": 1e6 * pod_s * sim.sv.pod_cpus / len(done) if done else None,
        "panic_ticks": sum(1 for d in decs if d["panic_mode"]), "ticks": len(decs),
        "activator_in_path_ticks": sum(1 for d in decs if d["ebc"] is not None and d["ebc"] < 0),
        "latency_series": series,
    }


def single_pod(target, service, load, seed=1):
    """One pod, no autoscaler (as one primed under openloop or wrk here): the service's
    containerConcurrency still caps the pod; max/min scale are pinned to 1."""
    sv = Service(**{**service.__dict__, "min_scale": 1, "max_scale": 1, "initial_scale": 1})
    return Sim(target, sv, load, seed=seed).run()



def recommend(tg, levels, slo_ms, headroom, base, load, seed=1, extra=()):
    """The (target, containerConcurrency) the model recommends for tg under load: each measured
    level as containerConcurrency with target = max(1, floor(headroom x it)), and each of extra
    ((label, target, containerConcurrency, utilisation)) for comparison, simulated with the same
    seed. The recommendation: the cheapest in CPU-seconds whose p95 meets slo_ms (the lowest p95
    when none does). Returns (rows, best): rows of (label, target, cc, utilisation, summary)."""
    cands = [("cc=%d" % cc, max(1, math.floor(headroom * cc)), cc, 1.0) for cc in sorted(set(levels))]
    rows, seen = [], {}
    for label, target, cc, util in list(cands) + list(extra):
        key = (target, cc, util)
        if key not in seen:          # the same choice twice is simulated once
            sv = Service(**{**base.__dict__, "container_concurrency": cc, "target": target, "utilization": util})
            seen[key] = summarize(Sim(tg, sv, load, seed=seed).run())
        rows.append((label, target, cc, util, seen[key]))
    mine = rows[:len(cands)]
    ok = [r for r in mine if r[4]["p95_ms"] is not None and r[4]["p95_ms"] <= slo_ms]
    best = (min(ok, key=lambda r: (r[4]["cpu_seconds"], r[4]["p95_ms"])) if ok else
            min(mine, key=lambda r: r[4]["p95_ms"] if r[4]["p95_ms"] is not None else float("inf")))
    return rows, best
