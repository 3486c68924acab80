// Trace.java - the trace headers every Java chain peer reads and writes, as primed's
// (docs/chain.md), shared by Chain.java (the JDK's HttpServer) and Stacks.java (the Tomcat and
// Netty peers): the incoming context (X-B3-*, else b3, else traceparent; a header that does not
// parse is ignored, a sampled trace is started when none does), the response's traceparent and
// the headers a call to callme carries. No I/O here.
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;

final class Trace {
    private Trace() {}

    private static final String ID = "[0-9a-f]{16}|[0-9a-f]{32}";

    /** bytes random bytes as lower-case hex: span and trace ids. */
    static String hex(int bytes) {
        StringBuilder sb = new StringBuilder();
        ThreadLocalRandom r = ThreadLocalRandom.current();
        for (int i = 0; i < bytes; i++) sb.append(String.format("%02x", r.nextInt(256)));
        return sb.toString();
    }

    /** The trace a request continues: {trace id, parent span or null, sampled "1"/"0"}, from a
     *  request's headers by name (null when absent). traceparent's flags must be two hex digits. */
    static String[] incoming(Function<String, String> header) {
        String t = header.apply("X-B3-TraceId");
        if (t != null && t.matches(ID))
            return new String[] {t, header.apply("X-B3-SpanId"), "0".equals(header.apply("X-B3-Sampled")) ? "0" : "1"};
        String b3 = header.apply("b3");
        if (b3 != null) {
            String[] p = b3.split("-");
            if (p.length >= 2 && p[0].matches(ID))
                return new String[] {p[0], p[1], p.length > 2 && "0".equals(p[2]) ? "0" : "1"};
        }
        String tp = header.apply("traceparent");
        if (tp != null) {
            String[] p = tp.split("-");
            if (p.length == 4 && p[1].matches("[0-9a-f]{32}") && p[3].matches("[0-9a-f]{2}"))
                return new String[] {p[1], p[2], (Integer.parseInt(p[3], 16) & 1) == 1 ? "1" : "0"};
        }
        return new String[] {hex(16), null, "1"};
    }

    /** The traceparent naming span in trace tr (a 64-bit trace id padded to 128 bits). */
    static String traceparent(String[] tr, String span) {
        return "00-" + (tr[0].length() == 32 ? tr[0] : "0000000000000000" + tr[0]) + "-" + span + "-0" + tr[2];
    }

    /** The headers a call to callme carries: B3 with the new span child under span, and traceparent. */
    static String[][] forward(String[] tr, String span, String child) {
        return new String[][] {{"X-B3-TraceId", tr[0]}, {"X-B3-SpanId", child}, {"X-B3-ParentSpanId", span},
                               {"X-B3-Sampled", tr[2]}, {"traceparent", traceparent(tr, child)}};
    }
}
