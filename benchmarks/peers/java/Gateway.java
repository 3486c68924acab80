// Gateway.java - seed 003's gateway on the JDK alone (com.sun.net.httpserver + java.net.http),
// in the three models Java teams compare, chosen by MODEL:
//   servlet   a fixed pool of POOL (200, Tomcat's maxThreads) request threads, each blocking on
//             HttpClient.send for the catalog and then for each inventory call in turn, as
//             RestTemplate code does;
//   reactive  no thread blocks on a call: sendAsync for the catalog, then every inventory call
//             at once with sendAsync and CompletableFuture.allOf; the server's handlers run on
//             one thread per CPU (an event loop's size) and answer from the client's callbacks;
//   virtual   the servlet code (blocking calls in turn) on one virtual thread per request.
// GET /api/products answers as primed's gateway does (docs/gateway.md, src/gateway.c): the
// catalog's products in its order, each object as the catalog wrote it with "availability"
// appended: inventory's object, or null when its call failed, answered non-200 or something
// that is not one JSON object of at most 512 bytes, or passed the deadline. Deadlines as
// primed's: the catalog call has UPSTREAM_TIMEOUT; the inventory calls share one deadline,
// UPSTREAM_TIMEOUT from the catalog's answer (a product whose turn comes after it is not
// called). A catalog that cannot be reached is 502, one past the timeout 504, one that
// answers non-200 or not a JSON array of objects 502; the body names the upstream.
// GET /metrics counts, under primed's names so benchmarks/gateway.py reads both alike,
// /api/products answered 200 and products answered null. /healthz and /readyz answer "OK".
// Environment: CATALOG_URL and INVENTORY_URL (http://HOST:PORT), UPSTREAM_TIMEOUT (s, 3),
// MODEL (servlet), POOL (200), HOST (0.0.0.0), PORT (8080; 0 picks one, the ready line on
// stderr says which). A bad setting is one line on stderr and exit 2. The answer's shape is
// Products.java's, shared with the Tomcat and Netty gateways.
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

public final class Gateway {
    private static final AtomicLong ANSWERED = new AtomicLong();
    private static final AtomicLong FALLBACKS = new AtomicLong();
    private static HttpClient client;
    private static String catalogBase, inventoryBase, catalogName, inventoryName;
    private static long timeoutNs;

    private static void die(String msg) {
        System.err.println("gateway: " + msg);
        System.exit(2);
    }

    /** An upstream's base URL without a trailing slash; dies on anything but http://HOST[:PORT]. */
    private static String base(String name, String url) {
        if (url == null || url.isEmpty()) die(name + " is required (http://HOST:PORT)");
        URI u = URI.create(url);
        if (!"http".equals(u.getScheme()) || u.getHost() == null) die(name + " must be http://HOST[:PORT], not " + url);
        return url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
    }

    private static String authority(String base) {
        URI u = URI.create(base);
        return u.getHost() + ":" + (u.getPort() < 0 ? 80 : u.getPort());
    }

    private static HttpRequest get(String url, long timeoutNanos) {
        return HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofNanos(Math.max(1, timeoutNanos))).GET().build();
    }

    /** Inventory's answer as the availability to append, or null for the fallback. */
    private static String availability(HttpResponse<String> r) {
        return r == null ? null : Products.availability(r.statusCode(), r.body());
    }

    private static String answer(List<String> products, String[] avail) {
        return Products.answer(products, avail, FALLBACKS);
    }

    private static String itemUrl(String product) {
        return Products.itemUrl(inventoryBase, product);
    }

    /** The status and body for a catalog call that failed with e (timeout: 504, else 502). */
    private static Object[] catalogFailure(Throwable e) {
        while (e instanceof CompletionException && e.getCause() != null) e = e.getCause();
        if (e instanceof HttpTimeoutException)
            return new Object[] {504, "upstream " + catalogName + ": no answer within the timeout"};
        return new Object[] {502, "upstream " + catalogName + ": connect failed: " + e};
    }

    /** servlet and virtual: the catalog, then each product's inventory in turn, on this thread. */
    private static void blocking(HttpExchange ex) throws IOException {
        HttpResponse<String> cat;
        try {
            cat = client.send(get(catalogBase + "/api/catalog", timeoutNs), HttpResponse.BodyHandlers.ofString());
        } catch (IOException | InterruptedException e) {
            Object[] f = catalogFailure(e);
            reply(ex, (Integer) f[0], "text/plain", (String) f[1]);
            return;
        }
        List<String> products = cat.statusCode() == 200 ? Products.objects(cat.body()) : null;
        if (products == null) {
            reply(ex, 502, "text/plain", "upstream " + catalogName + ": " + (cat.statusCode() != 200
                    ? "answered " + cat.statusCode() : "not a JSON array of objects"));
            return;
        }
        long deadline = System.nanoTime() + timeoutNs;
        String[] avail = new String[products.size()];
        for (int i = 0; i < avail.length; i++) {
            long left = deadline - System.nanoTime();
            String url = itemUrl(products.get(i));
            if (left <= 0 || url == null) continue;
            try {
                avail[i] = availability(client.send(get(url, left), HttpResponse.BodyHandlers.ofString()));
            } catch (IOException | InterruptedException | IllegalArgumentException e) {
                avail[i] = null;
            }
        }
        ANSWERED.incrementAndGet();
        reply(ex, 200, "application/json", answer(products, avail));
    }

    /** reactive: the same answer with no thread waiting on a call; the reply is sent from a callback. */
    private static void reactive(HttpExchange ex) {
        client.sendAsync(get(catalogBase + "/api/catalog", timeoutNs), HttpResponse.BodyHandlers.ofString())
            .thenCompose(cat -> {
                List<String> products = cat.statusCode() == 200 ? Products.objects(cat.body()) : null;
                if (products == null) {
                    return CompletableFuture.completedFuture(new Object[] {502, "upstream " + catalogName + ": "
                            + (cat.statusCode() != 200 ? "answered " + cat.statusCode() : "not a JSON array of objects")});
                }
                String[] avail = new String[products.size()];
                CompletableFuture<?>[] calls = new CompletableFuture<?>[avail.length];
                for (int i = 0; i < avail.length; i++) {
                    final int k = i;
                    String url = itemUrl(products.get(i));
                    calls[i] = url == null ? CompletableFuture.completedFuture(null)
                        : client.sendAsync(get(url, timeoutNs), HttpResponse.BodyHandlers.ofString())
                            .handle((r, e) -> avail[k] = e == null ? availability(r) : null);
                }
                return CompletableFuture.allOf(calls).thenApply(v -> {
                    ANSWERED.incrementAndGet();
                    return new Object[] {200, answer(products, avail)};
                });
            })
            .exceptionally(Gateway::catalogFailure)
            .thenAccept(r -> {
                int st = (Integer) r[0];
                try {
                    reply(ex, st, st == 200 ? "application/json" : "text/plain", (String) r[1]);
                } catch (IOException e) {
                    ex.close();
                }
            });
    }

    private static void reply(HttpExchange ex, int status, String type, String body) throws IOException {
        Reply.send(ex, status, type, body);
    }

    public static void main(String[] args) throws Exception {
        String model = System.getenv().getOrDefault("MODEL", "servlet");
        int pool = Integer.parseInt(System.getenv().getOrDefault("POOL", "200"));
        double t = Double.parseDouble(System.getenv().getOrDefault("UPSTREAM_TIMEOUT", "3"));
        if (!(t > 0 && t <= 3600)) die("UPSTREAM_TIMEOUT must be in (0, 3600] s, not " + t);
        if (pool < 1) die("POOL must be at least 1, not " + pool);
        timeoutNs = (long) (t * 1e9);
        catalogBase = base("CATALOG_URL", System.getenv("CATALOG_URL"));
        inventoryBase = base("INVENTORY_URL", System.getenv("INVENTORY_URL"));
        catalogName = authority(catalogBase);
        inventoryName = authority(inventoryBase);
        ExecutorService executor;
        switch (model) {
        case "servlet": executor = Executors.newFixedThreadPool(pool); break;
        case "virtual": executor = Executors.newVirtualThreadPerTaskExecutor(); break;
        case "reactive": executor = Executors.newFixedThreadPool(Runtime.getRuntime().availableProcessors()); break;
        default: die("MODEL must be servlet, reactive or virtual, not " + model); return;
        }
        client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofNanos(timeoutNs)).build();
        String host = System.getenv().getOrDefault("HOST", "0.0.0.0");
        int port = Integer.parseInt(System.getenv().getOrDefault("PORT", "8080"));
        // TCP_NODELAY on the server's sockets, as the seeds' servers (Tomcat, Netty) set it: the
        // JDK's HttpServer leaves Nagle on, and a keep-alive answer's head and body (two writes)
        // would then wait for the client's delayed ACK, ~40 ms each, measuring Nagle rather than
        // the model. -Dsun.net.httpserver.nodelay=false in JAVA_OPTS restores the JDK's default.
        if (System.getProperty("sun.net.httpserver.nodelay") == null)
            System.setProperty("sun.net.httpserver.nodelay", "true");
        HttpServer server = HttpServer.create(new InetSocketAddress(host, port), 1024);
        server.createContext("/api/products", ex -> {
            if ("reactive".equals(model)) reactive(ex);
            else blocking(ex);
        });
        server.createContext("/metrics", ex -> reply(ex, 200, "text/plain; version=0.0.4",
                "primed_http_requests_total{path=\"/api/products\",code=\"200\"} " + ANSWERED.get() + "\n"
                + "primed_gateway_fallbacks_total " + FALLBACKS.get() + "\n"));
        server.createContext("/healthz", ex -> reply(ex, 200, "text/plain", "OK"));
        server.createContext("/readyz", ex -> reply(ex, 200, "text/plain", "OK"));
        server.setExecutor(executor);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> server.stop(0)));
        server.start();
        System.err.println("gateway: ready model=" + model + (model.equals("servlet") ? " pool=" + pool : "")
                + " upstream_timeout=" + t + "s catalog=" + catalogName + " inventory=" + inventoryName
                + " port=" + server.getAddress().getPort() + " java=" + System.getProperty("java.version"));
    }
}
