"""knative/model/kpa.py - Knative's KPA decider, written again in Python from its source.

Owns: the scale decision of knative/serving's pkg/autoscaler/scaling/autoscaler.go (Scale():
desired pods from the stable and panic concurrencies, the rate clamps, panic mode, activation
scale, the scale-down delay window, the excess burst capacity), the max-over-time window it
delays scale-downs with (pkg/autoscaler/aggregation/max/{window,timewindow}.go), the defaults of
config-autoscaler (pkg/autoscaler/config/config.go) and how a Service's annotations become a
target (pkg/reconciler/autoscaling/resources/target.go, ResolveMetricTarget).
Invariants: one Decider is one revision's autoscaler; it is fed one observation per tick with
times that never go back (as the autoscaler's ticker does); it knows nothing of pods, requests or
the simulation around it (knative/model/ksim.py). Standard library only, no I/O.
Written from reading the Go source; not a translation of it line by line.
"""

import math
from dataclasses import dataclass, fields, replace

# config-autoscaler's defaults, as pkg/autoscaler/config/config.go's defaultConfig() sets them
# (knative/serving main, read 2026-12-03):
DEFAULTS = {
    "container_concurrency_target_default": 100.0,   # ContainerConcurrencyTargetDefault
    "target_utilization": 0.7,                      # defaultTargetUtilization (both fractions)
    "max_scale_up_rate": 1000.0,                    # MaxScaleUpRate
    "max_scale_down_rate": 2.0,                     # MaxScaleDownRate
    "target_burst_capacity": 211.0,                 # TargetBurstCapacity (211 since v1.4; was 200)
    "panic_window_percentage": 10.0,                # PanicWindowPercentage (of the stable window)
    "panic_threshold": 2.0,                         # PanicThresholdPercentage 200 -> ratio 2
    "stable_window_s": 60.0,                        # StableWindow 60 s
    "scale_to_zero_grace_period_s": 30.0,           # ScaleToZeroGracePeriod 30 s
    "scale_down_delay_s": 0.0,                      # ScaleDownDelay 0 s
    "activator_capacity": 100.0,                    # ActivatorCapacity
    "initial_scale": 1,                             # InitialScale
}
# autoscaler.go: the decider's ticker (tickInterval) and the scale-down delay window's granularity
TICK_S = 2.0
# pkg/apis/autoscaling: TargetMin, the smallest target a Service resolves to
TARGET_MIN = 0.01


@dataclass
class DeciderSpec:
    """DeciderSpec's fields (pkg/autoscaler/scaling/multiscaler.go) in snake case, seconds for
    durations; panic_threshold is a ratio (2 = 200 %)."""
    target_value: float
    total_value: float
    target_burst_capacity: float = DEFAULTS["target_burst_capacity"]
    panic_threshold: float = DEFAULTS["panic_threshold"]
    max_scale_up_rate: float = DEFAULTS["max_scale_up_rate"]
    max_scale_down_rate: float = DEFAULTS["max_scale_down_rate"]
    stable_window_s: float = DEFAULTS["stable_window_s"]
    scale_down_delay_s: float = DEFAULTS["scale_down_delay_s"]
    activation_scale: int = 1
    reachable: bool = True

    @classmethod
    def from_dict(cls, d):
        """A spec from a JSON object; unknown keys are an error (a misspelt field must not
        silently fall back to a default)."""
        known = {f.name for f in fields(cls)}
        extra = set(d) - known - {"initial_ready_pods"}
        if extra:
            raise ValueError("unknown DeciderSpec field(s): %s" % ", ".join(sorted(extra)))
        s = cls(**{k: v for k, v in d.items() if k in known})
        s.check()
        return s

    def updated(self, d):
        """This spec with the fields of d replaced (the autoscaler's Update())."""
        s = replace(self, **d)
        s.check()
        return s

    def check(self):
        if not self.target_value > 0:
            raise ValueError("target_value must be > 0, was %r" % self.target_value)
        if not self.max_scale_up_rate > 0 or not self.max_scale_down_rate > 0:
            raise ValueError("max_scale_up_rate and max_scale_down_rate must be > 0")


def resolve_target(container_concurrency=0, target=None, utilization=None, cfg=DEFAULTS):
    """(target_value, total_value) for a concurrency-scaled Service, as ResolveMetricTarget does:
    total is containerConcurrency (0 = unlimited: container-concurrency-target-default), or the
    target annotation capped at a non-zero containerConcurrency; target_value = total x the
    utilisation (annotation target-utilization-percentage / 100, else the default 0.7), at least
    TargetMin."""
    total = float(container_concurrency) or cfg["container_concurrency_target_default"]
    if target is not None:
        total = float(target)
        if container_concurrency:
            total = min(total, float(container_concurrency))
    tu = cfg["target_utilization"] if utilization is None else float(utilization)
    return max(TARGET_MIN, total * tu), total


class MaxWindow:
    """The largest value recorded in the last `buckets` buckets (max.TimeWindow): values keyed by
    bucket index = floor(t / granularity); a value that is larger and newer than an older one
    makes the older one irrelevant, so only a descending run of (index, value) is kept."""

    def __init__(self, duration_s, granularity_s=TICK_S):
        self.size = max(1, int(math.ceil(duration_s / granularity_s)))
        self.granularity = granularity_s
        self.run = []            # [(index, value)], indexes ascending, values descending

    def record(self, t_s, value):
        index = int(t_s // self.granularity)
        same = [v for i, v in self.run if i == index]
        if same:                 # two records in one bucket: the larger one counts
            value = max(value, same[0])
        self.run = [(i, v) for i, v in self.run if v > value and index - i < self.size]
        self.run.append((index, value))

    def current(self):
        return self.run[0][1]


class Decider:
    """One revision's KPA decider. scale() is Scale(): it returns (desired_pod_count,
    excess_burst_capacity), or (None, None) for a tick without metrics (Knative's invalid
    ScaleResult, which changes no state)."""

    def __init__(self, spec, initial_ready_pods=0, t_s=0.0):
        self.spec = spec
        # newAutoscaler: a decider created over more than one ready pod starts in panic, holding
        # that many pods, so that a restart of the autoscaler (which loses the metric history)
        # does not scale the revision down before the windows have filled again.
        self.panic_since = t_s if initial_ready_pods > 1 else None
        self.max_panic_pods = int(initial_ready_pods)
        # New(): the delay window exists only when a scale-down delay was configured; Update()
        # does not create or resize it
        self.delay = MaxWindow(spec.scale_down_delay_s) if spec.scale_down_delay_s > 0 else None

    def update(self, changes):
        self.spec = self.spec.updated(changes)

    def in_panic(self):
        return self.panic_since is not None

    def scale(self, t_s, stable, panic, ready_pods, no_data=False):
        if no_data:
            return None, None
        s = self.spec
        ready = max(1.0, float(ready_pods))             # "use 1 if there are zero current pods"
        # Rate limits relative to the ready pods. ceil: a slow rate still grows by one pod
        # (1.1 x 2 pods -> 3); a revision that is not reachable (no route sends it traffic,
        # e.g. an older one during a roll-out) may drop straight to zero.
        up = math.ceil(s.max_scale_up_rate * ready)
        down = math.floor(ready / s.max_scale_down_rate) if s.reachable else 0
        want_stable = math.ceil(stable / s.target_value)
        want_panic = math.ceil(panic / s.target_value)
        stable_pods = int(min(max(want_stable, down), up))
        panic_pods = int(min(max(want_panic, down), up))
        # activation-scale: once there is any demand, never fewer than that many pods (demand
        # zero may still scale to zero)
        if s.activation_scale > 1:
            if want_stable > 0 and stable_pods < s.activation_scale:
                stable_pods = s.activation_scale
            if want_panic > 0 and panic_pods < s.activation_scale:
                panic_pods = s.activation_scale
        # Panic: entered when the panic window asks for panic_threshold x the ready pods; every
        # tick above it restarts the clock; left a whole stable window after the last such tick
        # (strictly after: panicTime + StableWindow before now), when the surge is in the
        # stable average too.
        over = want_panic / ready >= s.panic_threshold
        if over:
            self.panic_since = t_s
        elif self.panic_since is not None and self.panic_since + s.stable_window_s < t_s:
            self.panic_since = None
            self.max_panic_pods = 0
        desired = stable_pods
        if self.panic_since is not None:
            # in panic the larger of the two counts, and never fewer than already asked for
            desired = max(stable_pods, panic_pods, self.max_panic_pods)
            self.max_panic_pods = desired
        # scale-down delay: the largest count asked for within the last scale_down_delay_s;
        # skipped for a revision that is not reachable (autoscaler_test.go,
        # TestAutoscalerScaleDownDelayNotReachable: it drops to zero at once)
        if self.delay is not None and s.reachable:
            self.delay.record(t_s, desired)
            desired = int(self.delay.current())
        # Excess burst capacity: spare in-flight room beyond target_burst_capacity over the
        # ready pods as reported (zero stays zero here), against the panic window's
        # concurrency. Negative means the activator stays in the request path. A capacity of 0
        # keeps the activator out (0); -1 (unlimited) keeps it in (-1).
        if s.target_burst_capacity == 0:
            ebc = 0
        elif s.target_burst_capacity > 0:
            ebc = int(math.floor(float(ready_pods) * s.total_value - s.target_burst_capacity - panic))
        else:
            ebc = -1
        return desired, ebc


def decide_scenario(obj):
    """One scenario of `knative-sim decide` (a dict with "spec" and "steps") -> its answer.
    A step may carry "spec" (fields to change from that step on, the autoscaler's Update()) and
    "no_data": true (the metrics are missing: null answers, no state change)."""
    spec_d = dict(obj["spec"])
    initial = int(spec_d.pop("initial_ready_pods", 0))
    d = Decider(DeciderSpec.from_dict(spec_d), initial_ready_pods=initial, t_s=0.0)
    pods, ebcs = [], []
    for st in obj["steps"]:
        if "spec" in st:
            d.update(st["spec"])
        p, e = d.scale(float(st["t_s"]), float(st.get("stable_concurrency", 0)),
                       float(st.get("panic_concurrency", 0)), int(st.get("ready_pods", 0)),
                       no_data=bool(st.get("no_data")))
        pods.append(p)
        ebcs.append(e)
    return {"desired_pod_count": pods, "excess_burst_capacity": ebcs}
