// Example.java - the seed's Java service, kept as the comparison peer for primed.
//
// JDK-only (com.sun.net.httpserver): GET /example makes one random 1000-bit probable
// prime with new BigInteger(1000, 3, new Random()) and answers "Hello_N" (N from one
// AtomicLong), logging each request at INFO through java.util.logging, as the seed did.
// /healthz and /readyz answer 200 "OK" without logging. PORT comes from the environment
// (default 8080). THREAD_TYPE picks the executor: "fixed" (default) is
// Executors.newFixedThreadPool(200); "virtual" is one virtual thread per task, which
// needs JDK 21+ (Debian 12's JDK 17 has none: the app then says so and exits 2 instead of
// quietly measuring something else).
// Answers go through Reply.java, shared with the JDK 21 peers (run compiles both).
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.lang.reflect.Method;
import java.math.BigInteger;
import java.net.InetSocketAddress;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Logger;

public final class Example {
    private static final Logger LOG = Logger.getLogger(Example.class.getName());
    private static final AtomicLong COUNTER = new AtomicLong();

    private static ExecutorService executor(String type) throws Exception {
        switch (type) {
        case "fixed":
            return Executors.newFixedThreadPool(200);
        case "virtual":
            try {
                Method m = Executors.class.getMethod("newVirtualThreadPerTaskExecutor");
                return (ExecutorService) m.invoke(null);
            } catch (NoSuchMethodException e) {
                System.err.println("Example: THREAD_TYPE=virtual needs JDK 21+, this is "
                        + System.getProperty("java.version"));
                System.exit(2);
            }
        default:
            System.err.println("Example: THREAD_TYPE must be fixed or virtual, not " + type);
            System.exit(2);
            return null;
        }
    }

    private static void reply(HttpExchange ex, int status, String body) throws IOException {
        Reply.send(ex, status, "text/plain", body);
    }

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(System.getenv().getOrDefault("PORT", "8080"));
        String type = System.getenv().getOrDefault("THREAD_TYPE", "fixed");
        HttpServer server = HttpServer.create(new InetSocketAddress(port), 1024);
        server.createContext("/example", ex -> {
            new BigInteger(1000, 3, new Random());
            String body = "Hello_" + COUNTER.incrementAndGet();
            LOG.info("GET /example -> " + body);
            reply(ex, 200, body);
        });
        server.createContext("/healthz", ex -> reply(ex, 200, "OK"));
        server.createContext("/readyz", ex -> reply(ex, 200, "OK"));
        server.setExecutor(executor(type));
        Runtime.getRuntime().addShutdownHook(new Thread(() -> server.stop(0)));
        server.start();
        System.err.println("Example: ready port=" + port + " thread_type=" + type
                + " java=" + System.getProperty("java.version"));
    }
}
