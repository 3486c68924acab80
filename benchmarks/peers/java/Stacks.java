// Stacks.java - what the Tomcat and Netty peers (TomcatPeer.java, NettyPeer.java) share, apart
// from their server: the configuration from the environment, /example's work, the chain's event
// store (JDBC through HikariCP to H2 in memory or PostgreSQL) and bodies (Chain.java's, as
// primed's: docs/chain.md; the trace headers are Trace.java's), the gateway's calls in turn with
// java.net.http.HttpClient.send (the servlet model, as RestTemplate makes them) and the settings
// line each peer prints before its ready line. Never a socket of its own.
//
// Environment: HOST (0.0.0.0), PORT (8080; 0 picks one), APP_NAME (primed), POD_NAME,
// POD_NAMESPACE, CALLME_URL, CATALOG_URL + INVENTORY_URL (the gateway; /api/products is 404
// without them), UPSTREAM_TIMEOUT (s, 3), DB_URL (jdbc:h2:mem:events, jdbc:postgresql://..., or none:
// no event store, /callme/ping and /caller/ping answer 503),
// DB_USER, DB_PASSWORD, DB_POOL (HikariCP's maximumPoolSize, 10: its default). A bad value is one
// line on stderr and exit 2.
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.math.BigInteger;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

final class Stacks {
    static final AtomicLong COUNTER = new AtomicLong();
    static final AtomicLong ANSWERED = new AtomicLong();
    static final AtomicLong FALLBACKS = new AtomicLong();
    static String host, app, pod, ns, callme, callmeName, catalogBase, inventoryBase, catalogName, dbUrl;
    static int port;
    static long timeoutNs;
    static HttpClient client;
    static HikariDataSource db;

    private Stacks() {}

    static void die(String who, String msg) {
        System.err.println(who + ": " + msg);
        System.exit(2);
    }

    private static String base(String who, String name, String url) {
        URI u;
        try {
            u = URI.create(url);
        } catch (IllegalArgumentException e) {
            u = null;
        }
        if (u == null || !"http".equals(u.getScheme()) || u.getHost() == null)
            die(who, name + " must be http://HOST[:PORT][/PATH], not " + url);
        return url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
    }

    static String authority(String url) {
        URI u = URI.create(url);
        return u.getHost() + ":" + (u.getPort() < 0 ? 80 : u.getPort());
    }

    static int intEnv(String who, String name, int dflt, int min, int max) {
        String v = System.getenv(name);
        if (v == null) return dflt;
        try {
            int n = Integer.parseInt(v);
            if (n >= min && n <= max) return n;
        } catch (NumberFormatException e) {
            // below
        }
        die(who, name + " must be an integer in [" + min + ", " + max + "], not " + v);
        return dflt;
    }

    /** Reads the environment; opens the event store (HikariCP) and the HTTP client. */
    static void configure(String who) throws SQLException {
        Map<String, String> env = System.getenv();
        host = env.getOrDefault("HOST", "0.0.0.0");
        port = intEnv(who, "PORT", 8080, 0, 65535);
        app = env.getOrDefault("APP_NAME", "primed");
        pod = env.getOrDefault("POD_NAME", "unknown-pod");
        ns = env.getOrDefault("POD_NAMESPACE", "unknown-namespace");
        double t;
        try {
            t = Double.parseDouble(env.getOrDefault("UPSTREAM_TIMEOUT", "3"));
        } catch (NumberFormatException e) {
            t = -1;
        }
        if (!(t > 0 && t <= 3600)) die(who, "UPSTREAM_TIMEOUT must be in (0, 3600] s, not " + env.get("UPSTREAM_TIMEOUT"));
        timeoutNs = (long) (t * 1e9);
        if (env.get("CALLME_URL") != null) {
            callme = base(who, "CALLME_URL", env.get("CALLME_URL"));
            callmeName = authority(callme);
        }
        if (env.get("CATALOG_URL") != null || env.get("INVENTORY_URL") != null) {
            if (env.get("CATALOG_URL") == null || env.get("INVENTORY_URL") == null)
                die(who, "the gateway needs both CATALOG_URL and INVENTORY_URL");
            catalogBase = base(who, "CATALOG_URL", env.get("CATALOG_URL"));
            inventoryBase = base(who, "INVENTORY_URL", env.get("INVENTORY_URL"));
            catalogName = authority(catalogBase);
        }
        client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofNanos(timeoutNs)).build();
        dbUrl = env.getOrDefault("DB_URL", "jdbc:h2:mem:events;DB_CLOSE_DELAY=-1");
        if (dbUrl.equals("none")) return;   // no event store: the lab's /example rows
        if (!dbUrl.startsWith("jdbc:h2:") && !dbUrl.startsWith("jdbc:postgresql:"))
            die(who, "DB_URL must be jdbc:h2:..., jdbc:postgresql://... or none, not " + dbUrl);
        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl(dbUrl);
        hc.setUsername(env.getOrDefault("DB_USER", dbUrl.startsWith("jdbc:h2:") ? "sa" : System.getProperty("user.name")));
        hc.setPassword(env.getOrDefault("DB_PASSWORD", ""));
        hc.setMaximumPoolSize(intEnv(who, "DB_POOL", 10, 1, 1000));
        hc.setConnectionTimeout(Math.max(250, timeoutNs / 1_000_000));
        hc.setPoolName("events");
        try {
            db = new HikariDataSource(hc);
        } catch (RuntimeException e) {
            die(who, "the event store at " + dbUrl + " cannot be opened: " + e.getMessage());
        }
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            s.execute(dbUrl.startsWith("jdbc:h2:")
                ? "CREATE TABLE IF NOT EXISTS event(id BIGINT AUTO_INCREMENT PRIMARY KEY, ts TIMESTAMP NOT NULL, pod VARCHAR(255))"
                : "CREATE TABLE IF NOT EXISTS java_event(id BIGSERIAL PRIMARY KEY, ts TIMESTAMP NOT NULL, pod TEXT)");
        }
    }

    /** One line: the settings the lab records beside the row. */
    static String settings(String stack, String executor) {
        StringBuilder gc = new StringBuilder();
        for (GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans())
            gc.append(gc.length() == 0 ? "" : "+").append(b.getName().replace(' ', '_'));
        Runtime rt = Runtime.getRuntime();
        return "settings: stack=" + stack + " executor=" + executor + " java=" + System.getProperty("java.version")
            + " cpus=" + rt.availableProcessors() + " heap_max_mib=" + (rt.maxMemory() >> 20)
            + " heap_init_mib=" + (ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getInit() >> 20)
            + " gc=" + gc + " tcp_nodelay=on db=" + (db == null ? "none" : dbUrl.startsWith("jdbc:h2:") ? "h2:mem" : "postgresql")
            + " db_pool=" + (db == null ? 0 : db.getMaximumPoolSize()) + " cds=" + cds();
    }

    private static String cds() {
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments())
            if (a.startsWith("-XX:SharedArchiveFile=")) return "archive";
            else if (a.startsWith("-XX:ArchiveClassesAtExit=")) return "training";
        return "default";
    }

    /** /example: one random 1000-bit probable prime, as Example.java; "Hello_N". */
    static String example() {
        new BigInteger(1000, 3, new Random());
        return "Hello_" + COUNTER.incrementAndGet();
    }

    /** A reply: status, Content-Type, body, and the traceparent header or null. */
    record Answer(int status, String type, String body, String traceparent) {}

    static Answer text(int status, String body) {
        return new Answer(status, "text/plain", body, null);
    }

    /** The id the database generated for a new event row. */
    static long store() throws SQLException {
        if (db == null) throw new SQLException("no event store (DB_URL=none)");
        try (Connection c = db.getConnection()) {
            return Events.insert(c, dbUrl.startsWith("jdbc:h2:") ? "event" : "java_event", pod);
        }
    }

    static Answer traced(int status, String[] tr, String span, String body) {
        return new Answer(status, "text/plain; charset=utf-8", body, Trace.traceparent(tr, span));
    }

    static String callmeBody(long id) {
        return app + "(id=" + id + "): " + pod + " in " + ns + "\n";
    }

    static String callerBody(long id, String upstream) {
        return app + "(id=" + id + "): " + pod + " in " + ns + " is calling " + upstream;
    }

    /** /callme/ping, blocking: the event stored, then the body. */
    static Answer callmePing(String[] tr) {
        String span = Trace.hex(8);
        try {
            return traced(200, tr, span, callmeBody(store()));
        } catch (SQLException e) {
            return traced(503, tr, span, "event store failed: " + e.getMessage());
        }
    }

    /** /caller/ping, blocking: the event stored, then callme called with HttpClient.send. */
    static Answer callerPing(String[] tr) {
        String span = Trace.hex(8), child = Trace.hex(8);
        if (callme == null) return traced(404, tr, span, "no callme: start with CALLME_URL\n");
        long id;
        try {
            id = store();
        } catch (SQLException e) {
            return traced(503, tr, span, "event store failed: " + e.getMessage());
        }
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(callme)).timeout(Duration.ofNanos(timeoutNs)).GET();
        for (String[] h : Trace.forward(tr, span, child)) b.header(h[0], h[1]);
        HttpResponse<String> r;
        try {
            r = client.send(b.build(), HttpResponse.BodyHandlers.ofString());
        } catch (HttpTimeoutException e) {
            return traced(504, tr, span, "upstream " + callmeName + ": no answer within the timeout");
        } catch (IOException | InterruptedException e) {
            return traced(502, tr, span, "upstream " + callmeName + ": connect failed: " + e);
        }
        if (r.statusCode() / 100 != 2) return traced(502, tr, span, "upstream " + callmeName + ": answered " + r.statusCode());
        return traced(200, tr, span, callerBody(id, r.body()));
    }

    private static HttpRequest get(String url, long timeoutNanos) {
        return HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofNanos(Math.max(1, timeoutNanos))).GET().build();
    }

    /** /api/products in the servlet model: the catalog, then each inventory call in turn, on this thread. */
    static Answer productsBlocking() {
        if (catalogBase == null) return text(404, "no gateway: start with CATALOG_URL and INVENTORY_URL\n");
        HttpResponse<String> cat;
        try {
            cat = client.send(get(catalogBase + "/api/catalog", timeoutNs), HttpResponse.BodyHandlers.ofString());
        } catch (HttpTimeoutException e) {
            return text(504, "upstream " + catalogName + ": no answer within the timeout");
        } catch (IOException | InterruptedException e) {
            return text(502, "upstream " + catalogName + ": connect failed: " + e);
        }
        List<String> products = cat.statusCode() == 200 ? Products.objects(cat.body()) : null;
        if (products == null) return text(502, Products.badCatalog(catalogName, cat.statusCode()));
        long deadline = System.nanoTime() + timeoutNs;
        String[] avail = new String[products.size()];
        for (int i = 0; i < avail.length; i++) {
            long left = deadline - System.nanoTime();
            String url = Products.itemUrl(inventoryBase, products.get(i));
            if (left <= 0 || url == null) continue;
            try {
                HttpResponse<String> r = client.send(get(url, left), HttpResponse.BodyHandlers.ofString());
                avail[i] = Products.availability(r.statusCode(), r.body());
            } catch (IOException | InterruptedException | IllegalArgumentException e) {
                avail[i] = null;
            }
        }
        ANSWERED.incrementAndGet();
        return new Answer(200, "application/json", Products.answer(products, avail, FALLBACKS), null);
    }

    /** /metrics under primed's names, so benchmarks/gateway.py reads every gateway alike. */
    static Answer metrics() {
        return new Answer(200, "text/plain; version=0.0.4",
            "primed_http_requests_total{path=\"/api/products\",code=\"200\"} " + ANSWERED.get() + "\n"
            + "primed_gateway_fallbacks_total " + FALLBACKS.get() + "\n", null);
    }
}
