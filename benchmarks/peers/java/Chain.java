// Chain.java - seed 000's second article on the JDK alone: callme and caller, as primed's
// /callme/ping and /caller/ping (docs/chain.md), with the event stored in H2 in memory through
// JDBC as the seed did (Debian's libh2-java on the class path).
//   GET /callme/ping  stores an event (time, POD_NAME) and answers
//                     "APP(id=N): POD in NAMESPACE\n", N the event's generated id;
//   GET /caller/ping  with CALLME_URL: stores its own event, calls CALLME_URL with
//                     java.net.http.HttpClient (blocking send, UPSTREAM_TIMEOUT), the trace
//                     forwarded as B3 (X-B3-TraceId, X-B3-SpanId, X-B3-ParentSpanId,
//                     X-B3-Sampled) and traceparent, and answers
//                     "APP(id=N): POD in NAMESPACE is calling " + callme's body verbatim;
//                     502 "upstream HOST:PORT: connect failed: ..." or "... answered N", 504
//                     "upstream HOST:PORT: no answer within the timeout"; 404 without CALLME_URL.
// The incoming trace (X-B3-*, else b3, else traceparent: Trace.java, as the Tomcat and Netty peers
// read it) is continued, else a sampled one is started; the response's traceparent names this
// server's span. /healthz, /readyz: "OK".
// Environment: APP_NAME (primed), POD_NAME (unknown-pod), POD_NAMESPACE (unknown-namespace),
// as primed's defaults; CALLME_URL; UPSTREAM_TIMEOUT (s, 3); THREAD_TYPE fixed (200 threads,
// Tomcat's default) or virtual; HOST (0.0.0.0); PORT (8080; 0 picks one, named on the ready line).
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.Executors;
import org.h2.jdbcx.JdbcConnectionPool;

public final class Chain {
    private static JdbcConnectionPool db;
    private static HttpClient client;
    private static String app, pod, ns, callme, callmeName;
    private static Duration timeout;

    /** The id H2 generated for a new event row. */
    private static long store() throws SQLException {
        try (Connection c = db.getConnection()) {
            return Events.insert(c, "event", pod);
        }
    }

    /** The new event's id, or null once 503 has been answered because H2 failed. */
    private static Long stored(HttpExchange ex, String[] tr, String span) throws IOException {
        try {
            return store();
        } catch (SQLException e) {
            reply(ex, 503, tr, span, "event store failed: " + e.getMessage());
            return null;
        }
    }

    private static void callmePing(HttpExchange ex) throws IOException {
        String[] tr = Trace.incoming(ex.getRequestHeaders()::getFirst);
        String span = Trace.hex(8);
        Long id = stored(ex, tr, span);
        if (id == null) return;
        reply(ex, 200, tr, span, app + "(id=" + id + "): " + pod + " in " + ns + "\n");
    }

    private static void callerPing(HttpExchange ex) throws IOException {
        String[] tr = Trace.incoming(ex.getRequestHeaders()::getFirst);
        String span = Trace.hex(8), child = Trace.hex(8);
        if (callme == null) {
            reply(ex, 404, tr, span, "no callme: start with CALLME_URL\n");
            return;
        }
        Long id = stored(ex, tr, span);
        if (id == null) return;
        HttpRequest.Builder req = HttpRequest.newBuilder(URI.create(callme)).timeout(timeout).GET();
        for (String[] h : Trace.forward(tr, span, child)) req.header(h[0], h[1]);
        HttpResponse<String> r;
        try {
            r = client.send(req.build(), HttpResponse.BodyHandlers.ofString());
        } catch (HttpTimeoutException e) {
            reply(ex, 504, tr, span, "upstream " + callmeName + ": no answer within the timeout");
            return;
        } catch (IOException | InterruptedException e) {
            reply(ex, 502, tr, span, "upstream " + callmeName + ": connect failed: " + e);
            return;
        }
        if (r.statusCode() / 100 != 2) {
            reply(ex, 502, tr, span, "upstream " + callmeName + ": answered " + r.statusCode());
            return;
        }
        reply(ex, 200, tr, span, app + "(id=" + id + "): " + pod + " in " + ns + " is calling " + r.body());
    }

    private static void reply(HttpExchange ex, int status, String[] tr, String span, String body) throws IOException {
        if (tr != null) ex.getResponseHeaders().set("traceparent", Trace.traceparent(tr, span));
        Reply.send(ex, status, "text/plain; charset=utf-8", body);
    }

    public static void main(String[] args) throws Exception {
        var env = System.getenv();
        app = env.getOrDefault("APP_NAME", "primed");
        pod = env.getOrDefault("POD_NAME", "unknown-pod");
        ns = env.getOrDefault("POD_NAMESPACE", "unknown-namespace");
        callme = env.get("CALLME_URL");
        String type = env.getOrDefault("THREAD_TYPE", "fixed");
        double t = Double.parseDouble(env.getOrDefault("UPSTREAM_TIMEOUT", "3"));
        if (!(t > 0 && t <= 3600)) {
            System.err.println("chain: UPSTREAM_TIMEOUT must be in (0, 3600] s, not " + t);
            System.exit(2);
        }
        timeout = Duration.ofNanos((long) (t * 1e9));
        if (callme != null) {
            URI u = URI.create(callme);
            if (!"http".equals(u.getScheme()) || u.getHost() == null) {
                System.err.println("chain: CALLME_URL must be http://HOST[:PORT]/PATH, not " + callme);
                System.exit(2);
            }
            callmeName = u.getHost() + ":" + (u.getPort() < 0 ? 80 : u.getPort());
            client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(timeout).build();
        }
        if (!type.equals("fixed") && !type.equals("virtual")) {
            System.err.println("chain: THREAD_TYPE must be fixed or virtual, not " + type);
            System.exit(2);
        }
        db = JdbcConnectionPool.create("jdbc:h2:mem:events;DB_CLOSE_DELAY=-1", "sa", "");
        db.setMaxConnections(64);
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE event(id BIGINT AUTO_INCREMENT PRIMARY KEY, ts TIMESTAMP NOT NULL, pod VARCHAR(255))");
        }
        // TCP_NODELAY on the server's sockets, as the seeds' servers (Tomcat, Netty) set it: the
        // JDK's HttpServer leaves Nagle on, and a keep-alive answer's head and body (two writes)
        // would then wait for the client's delayed ACK, ~40 ms each, measuring Nagle rather than
        // the model. -Dsun.net.httpserver.nodelay=false in JAVA_OPTS restores the JDK's default.
        if (System.getProperty("sun.net.httpserver.nodelay") == null)
            System.setProperty("sun.net.httpserver.nodelay", "true");
        HttpServer server = HttpServer.create(new InetSocketAddress(env.getOrDefault("HOST", "0.0.0.0"),
                Integer.parseInt(env.getOrDefault("PORT", "8080"))), 1024);
        server.createContext("/callme/ping", Chain::callmePing);
        server.createContext("/caller/ping", Chain::callerPing);
        server.createContext("/healthz", ex -> reply(ex, 200, null, null, "OK"));
        server.createContext("/readyz", ex -> reply(ex, 200, null, null, "OK"));
        server.setExecutor(type.equals("virtual") ? Executors.newVirtualThreadPerTaskExecutor()
                                                  : Executors.newFixedThreadPool(200));
        Runtime.getRuntime().addShutdownHook(new Thread(() -> server.stop(0)));
        server.start();
        System.err.println("chain: ready app=" + app + " callme=" + (callme == null ? "none" : callme)
                + " thread_type=" + type + " db=h2:mem port=" + server.getAddress().getPort()
                + " java=" + System.getProperty("java.version"));
    }
}
