// TomcatPeer.java - the servlet stack under Spring MVC: embedded Tomcat 10.1 (Debian's
// libtomcat10-java) on JDK 21, one servlet answering every route primed's peers answer:
//   GET /example        one 1000-bit probable prime on the request thread, "Hello_N" (Example.java's work)
//   GET /api/products   the gateway, servlet model: HttpClient.send for the catalog, then each
//                       inventory call in turn (as RestTemplate code does), primed's answer
//   GET /callme/ping    the event stored through JDBC (HikariCP; H2 in memory or PostgreSQL)
//   GET /caller/ping    its own event, then callme called with HttpClient.send
//   GET /metrics, /healthz, /readyz
// (bodies and errors: Stacks.java). EXECUTOR picks Tomcat's request executor: "platform" (its
// own pool, maxThreads MAX_THREADS = 200, Tomcat's default, or "cpus": the JVM's
// availableProcessors, i.e. -XX:ActiveProcessorCount; minSpareThreads min(10, maxThreads)) or
// "virtual" (the connector's useVirtualThreads: one virtual thread per request).
// MBEAN_REGISTRY=off calls Registry.disableRegistry() before Tomcat is made: no MBean per
// connector, pool, servlet and request processor (on: Tomcat's default). TCP_NODELAY is on
// (tcpNoDelay, Tomcat's default, set so the line says it). Prints Stacks.settings(), whose
// executor part is read back from the running pool and Tomcat's registry (so an option Tomcat
// ignored shows), and "tomcat: ready ... port=N".
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import javax.management.ObjectName;
import org.apache.catalina.Context;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.modeler.NoDescriptorRegistry;
import org.apache.tomcat.util.modeler.Registry;
import org.apache.tomcat.util.threads.ThreadPoolExecutor;

public final class TomcatPeer {
    static final class Routes extends HttpServlet {
        @Override
        protected void service(HttpServletRequest req, HttpServletResponse res) throws IOException {
            String path = req.getRequestURI();
            if (!"GET".equals(req.getMethod()) && !"HEAD".equals(req.getMethod())) {
                send(req, res, Stacks.text(405, "method not allowed\n"));
                return;
            }
            Stacks.Answer a = switch (path) {
                case "/example" -> Stacks.text(200, Stacks.example());
                case "/api/products" -> Stacks.productsBlocking();
                case "/callme/ping" -> Stacks.callmePing(Trace.incoming(req::getHeader));
                case "/caller/ping" -> Stacks.callerPing(Trace.incoming(req::getHeader));
                case "/metrics" -> Stacks.metrics();
                case "/healthz", "/readyz" -> Stacks.text(200, "OK");
                default -> Stacks.text(404, "not found\n");
            };
            send(req, res, a);
        }

        private static void send(HttpServletRequest req, HttpServletResponse res, Stacks.Answer a) throws IOException {
            byte[] b = a.body().getBytes(StandardCharsets.UTF_8);
            res.setStatus(a.status());
            res.setHeader("Content-Type", a.type());
            if (a.traceparent() != null) res.setHeader("traceparent", a.traceparent());
            res.setContentLength(b.length);
            if ("HEAD".equals(req.getMethod())) return;
            try (OutputStream os = res.getOutputStream()) {
                os.write(b);
            }
        }
    }

    public static void main(String[] args) throws Exception {
        String executor = System.getenv().getOrDefault("EXECUTOR", "platform");
        if (!executor.equals("platform") && !executor.equals("virtual"))
            Stacks.die("tomcat", "EXECUTOR must be platform or virtual, not " + executor);
        int maxThreads = "cpus".equals(System.getenv("MAX_THREADS")) ? Runtime.getRuntime().availableProcessors()
            : Stacks.intEnv("tomcat", "MAX_THREADS", 200, 1, 100000);
        String registry = System.getenv().getOrDefault("MBEAN_REGISTRY", "on");
        if (!registry.equals("on") && !registry.equals("off"))
            Stacks.die("tomcat", "MBEAN_REGISTRY must be on or off, not " + registry);
        Stacks.configure("tomcat");
        // Before any Tomcat object: each registers itself through the registry as it is made.
        if (registry.equals("off")) Registry.disableRegistry();
        Tomcat tomcat = new Tomcat();
        tomcat.setBaseDir(System.getProperty("java.io.tmpdir") + "/primed-tomcat." + ProcessHandle.current().pid());
        Connector c = new Connector("HTTP/1.1");
        c.setPort(Stacks.port);
        c.setProperty("address", Stacks.host);
        c.setProperty("tcpNoDelay", "true");
        c.setProperty("acceptCount", "1024");
        c.setProperty("maxKeepAliveRequests", "-1");
        if (executor.equals("virtual")) c.setProperty("useVirtualThreads", "true");
        else {
            c.setProperty("maxThreads", Integer.toString(maxThreads));
            // Tomcat's default is 10 spare threads; a pool smaller than that keeps them all.
            c.setProperty("minSpareThreads", Integer.toString(Math.min(10, maxThreads)));
        }
        tomcat.setConnector(c);
        Context ctx = tomcat.addContext("", null);
        Tomcat.addServlet(ctx, "routes", new Routes()).addMapping("/");
        tomcat.start();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                tomcat.stop();
                tomcat.destroy();
            } catch (Exception e) {
                // exiting anyway
            }
        }));
        String pool = executor.equals("virtual") ? "virtual"
            : c.getProtocolHandler().getExecutor() instanceof ThreadPoolExecutor e
            ? "platform maxThreads=" + e.getMaximumPoolSize() + " minSpareThreads=" + e.getCorePoolSize()
            : "platform maxThreads=unknown";
        // The registry Tomcat really used: a NoDescriptorRegistry once disabled. Not the platform
        // MBean server's own count there: that would start the server the option spares.
        Registry reg = Registry.getRegistry(null, null);
        String mbeans = reg instanceof NoDescriptorRegistry ? "mbean_registry=off"
            : "mbean_registry=on tomcat_mbeans=" + reg.getMBeanServer().queryNames(new ObjectName("Tomcat:*"), null).size();
        System.err.println(Stacks.settings("tomcat-" + org.apache.catalina.util.ServerInfo.getServerNumber(),
                pool + " " + mbeans));
        System.err.println("tomcat: ready executor=" + executor + " app=" + Stacks.app + " port=" + c.getLocalPort()
                + " java=" + System.getProperty("java.version"));
    }
}
