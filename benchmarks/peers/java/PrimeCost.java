// PrimeCost.java - the JVM's cost of one /example prime, without a server around it.
//
// The Results page compares primed with Java servers; a server's rate mixes the HTTP stack with
// the prime. This measures the prime alone: new BigInteger(1000, 3, new Random()) in a loop on
// one thread, timed by that thread's CPU clock (ThreadMXBean), so the JIT's and GC's own threads
// are not counted against it (their cost is the servers' rows' to show). Run it pinned to one core
// (taskset -c N) so that the JIT compiles on the same core it would in a one-CPU pod.
//
// The loop warms up in rounds until the JIT has settled: a round is settled when its CPU per
// prime is within TOLERANCE of the median of the WINDOW rounds before it. Then it measures
// ROUNDS rounds and prints each, with their median, min and max: one line per round, then
//   prime_cost java=VERSION warmup_rounds=W warmup_s=S rounds=R per_round=N
//     cpu_ms_median=X cpu_ms_min=X cpu_ms_max=X spread_pct=X settled=yes|no
// (one line). Random primes vary in cost (a candidate's gap to the next prime is random), so
// a round is many primes: its mean is what a server doing this work pays.
//   java PrimeCost [PER_ROUND=200] [ROUNDS=10] [MAX_WARMUP_S=120]
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.math.BigInteger;
import java.util.Arrays;
import java.util.Random;

public final class PrimeCost {
    private static final int WINDOW = 3;
    private static final double TOLERANCE = 0.05;
    private static long sink;

    private static double roundMs(ThreadMXBean mx, int n) {
        long t0 = mx.getCurrentThreadCpuTime();
        for (int i = 0; i < n; i++)
            sink += new BigInteger(1000, 3, new Random()).bitLength();
        return (mx.getCurrentThreadCpuTime() - t0) / 1e6 / n;
    }

    private static double median(double[] xs, int from, int to) {
        double[] s = Arrays.copyOfRange(xs, from, to);
        Arrays.sort(s);
        int m = s.length / 2;
        return s.length % 2 == 1 ? s[m] : (s[m - 1] + s[m]) / 2;
    }

    private static int arg(String[] args, int i, int dflt) {
        if (args.length <= i)
            return dflt;
        int v = Integer.parseInt(args[i]);
        if (v < 1)
            throw new IllegalArgumentException("PrimeCost: argument " + (i + 1) + " must be >= 1, not " + v);
        return v;
    }

    public static void main(String[] args) {
        int perRound = arg(args, 0, 200), rounds = arg(args, 1, 10), maxWarmupS = arg(args, 2, 120);
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        if (!mx.isCurrentThreadCpuTimeSupported()) {
            System.err.println("PrimeCost: this JVM has no per-thread CPU clock");
            System.exit(2);
        }
        double[] warm = new double[4096];
        int w = 0;
        boolean settled = false;
        long start = System.nanoTime();
        while (w < warm.length && (System.nanoTime() - start) / 1e9 < maxWarmupS) {
            warm[w] = roundMs(mx, perRound);
            System.out.printf("warmup %d cpu_ms=%.3f%n", w + 1, warm[w]);
            w++;
            if (w > WINDOW && Math.abs(warm[w - 1] / median(warm, w - 1 - WINDOW, w - 1) - 1) <= TOLERANCE) {
                settled = true;
                break;
            }
        }
        double warmupS = (System.nanoTime() - start) / 1e9;
        double[] ms = new double[rounds];
        for (int r = 0; r < rounds; r++) {
            ms[r] = roundMs(mx, perRound);
            System.out.printf("round %d cpu_ms=%.3f%n", r + 1, ms[r]);
        }
        double med = median(ms, 0, rounds);
        double min = Arrays.stream(ms).min().getAsDouble(), max = Arrays.stream(ms).max().getAsDouble();
        System.out.printf("prime_cost java=%s warmup_rounds=%d warmup_s=%.1f rounds=%d per_round=%d "
                + "cpu_ms_median=%.3f cpu_ms_min=%.3f cpu_ms_max=%.3f spread_pct=%.1f settled=%s%n",
                System.getProperty("java.version"), w, warmupS, rounds, perRound, med, min, max,
                (max - min) / med * 100, settled ? "yes" : "no");
        if (sink == 42)
            System.out.println();
    }
}
