// NettyPeer.java - the engine under Vert.x and Reactor Netty: a Netty 4.1 HTTP server (Debian's
// libnetty-java, NIO transport) on JDK 21, answering the routes TomcatPeer.java answers with the
// same bodies (Stacks.java), in the reactive style:
//   GET /example        the prime's work off the event loop, on a worker pool of WORKERS (20,
//                       Vert.x's default worker pool) as Vert.x executeBlocking does; the answer
//                       is written back from there
//   GET /api/products   the gateway, reactive: Netty's own HTTP client on the event loops, the
//                       catalog, then every inventory call at once, answered from the last
//                       callback; no thread waits on a call (deadlines as primed's)
//   GET /callme/ping    the JDBC insert (HikariCP) off the loop, on the worker pool
//   GET /caller/ping    its insert off the loop, then callme called with Netty's client
//   GET /metrics, /healthz, /readyz
// Event loops: LOOPS (2 x the JVM's CPU count, Netty's and Vert.x's default). TCP_NODELAY on
// for the server's and the client's sockets. Prints Stacks.settings() and "netty: ready ... port=N".
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.pool.AbstractChannelPoolHandler;
import io.netty.channel.pool.ChannelPool;
import io.netty.channel.pool.SimpleChannelPool;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

public final class NettyPeer {
    private static final AttributeKey<Promise<FullHttpResponse>> PENDING = AttributeKey.valueOf("pending");
    private static EventLoopGroup loops;
    private static ExecutorService workers;
    private static final ConcurrentHashMap<String, ChannelPool> POOLS = new ConcurrentHashMap<>();

    /** One upstream answer: status and body, or the failure (timeout or connect). */
    record Got(int status, String body, Throwable failure) {}

    /** GET url on the event loops (a kept-alive connection from the upstream's pool); done runs on a loop. */
    static void get(String url, String[][] headers, long timeoutNs, Consumer<Got> done) {
        URI u = URI.create(url);
        String key = u.getHost() + ":" + (u.getPort() < 0 ? 80 : u.getPort());
        ChannelPool pool = POOLS.computeIfAbsent(key, k -> new SimpleChannelPool(new Bootstrap().group(loops)
                .channel(NioSocketChannel.class).option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeoutNs / 1_000_000)))
                .remoteAddress(u.getHost(), u.getPort() < 0 ? 80 : u.getPort()), new AbstractChannelPoolHandler() {
                    @Override
                    public void channelCreated(Channel ch) {
                        ch.pipeline().addLast(new HttpClientCodec(), new HttpObjectAggregator(1 << 20),
                            new SimpleChannelInboundHandler<FullHttpResponse>() {
                                @Override
                                protected void channelRead0(ChannelHandlerContext ctx, FullHttpResponse r) {
                                    Promise<FullHttpResponse> p = ctx.channel().attr(PENDING).getAndSet(null);
                                    if (p != null && !p.trySuccess(r.retain())) r.release();   // already timed out
                                }

                                @Override
                                public void channelInactive(ChannelHandlerContext ctx) {
                                    Promise<FullHttpResponse> p = ctx.channel().attr(PENDING).getAndSet(null);
                                    if (p != null) p.tryFailure(new java.io.IOException("connection closed before the answer"));
                                }

                                @Override
                                public void exceptionCaught(ChannelHandlerContext ctx, Throwable e) {
                                    Promise<FullHttpResponse> p = ctx.channel().attr(PENDING).getAndSet(null);
                                    if (p != null) p.tryFailure(e);
                                    ctx.close();
                                }
                            });
                    }
                }));
        Promise<FullHttpResponse> p = loops.next().newPromise();
        Future<?> timer = loops.next().schedule(() -> p.tryFailure(new TimeoutException("no answer within the timeout")),
                Math.max(1, timeoutNs), TimeUnit.NANOSECONDS);
        pool.acquire().addListener((Future<Channel> f) -> {
            if (!f.isSuccess()) {
                p.tryFailure(f.cause());
                return;
            }
            Channel ch = f.getNow();
            String path = u.getRawPath() == null || u.getRawPath().isEmpty() ? "/" : u.getRawPath();
            if (u.getRawQuery() != null) path += "?" + u.getRawQuery();
            FullHttpRequest req = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, path, Unpooled.EMPTY_BUFFER);
            req.headers().set(HttpHeaderNames.HOST, key);
            for (String[] h : headers) req.headers().set(h[0], h[1]);
            ch.attr(PENDING).set(p);
            ch.writeAndFlush(req).addListener((ChannelFutureListener) w -> {
                if (!w.isSuccess()) p.tryFailure(w.cause());
            });
            p.addListener((Future<FullHttpResponse> r) -> {
                if (r.isSuccess() && HttpUtil.isKeepAlive(r.getNow())) {
                    pool.release(ch);
                } else {
                    ch.attr(PENDING).set(null);
                    ch.close();
                    pool.release(ch);
                }
            });
        });
        p.addListener((Future<FullHttpResponse> r) -> {
            timer.cancel(false);
            if (r.isSuccess()) {
                FullHttpResponse res = r.getNow();
                try {
                    done.accept(new Got(res.status().code(), res.content().toString(StandardCharsets.UTF_8), null));
                } finally {
                    res.release();
                }
            } else {
                done.accept(new Got(0, null, r.cause()));
            }
        });
    }

    static String failure(String name, Throwable e) {
        return e instanceof TimeoutException ? "upstream " + name + ": no answer within the timeout"
                                             : "upstream " + name + ": connect failed: " + e;
    }

    static void send(ChannelHandlerContext ctx, boolean keepAlive, boolean head, Stacks.Answer a) {
        byte[] b = a.body().getBytes(StandardCharsets.UTF_8);
        FullHttpResponse res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(a.status()),
                head ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(b));
        res.headers().set(HttpHeaderNames.CONTENT_TYPE, a.type()).setInt(HttpHeaderNames.CONTENT_LENGTH, b.length);
        if (a.traceparent() != null) res.headers().set("traceparent", a.traceparent());
        if (keepAlive) res.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
        var f = ctx.writeAndFlush(res);
        if (!keepAlive) f.addListener(ChannelFutureListener.CLOSE);
    }

    /** /api/products, reactive: the catalog, then every inventory call at once. */
    static void products(Consumer<Stacks.Answer> reply) {
        if (Stacks.catalogBase == null) {
            reply.accept(Stacks.text(404, "no gateway: start with CATALOG_URL and INVENTORY_URL\n"));
            return;
        }
        get(Stacks.catalogBase + "/api/catalog", new String[0][], Stacks.timeoutNs, cat -> {
            if (cat.failure() != null) {
                reply.accept(Stacks.text(cat.failure() instanceof TimeoutException ? 504 : 502, failure(Stacks.catalogName, cat.failure())));
                return;
            }
            List<String> products = cat.status() == 200 ? Products.objects(cat.body()) : null;
            if (products == null) {
                reply.accept(Stacks.text(502, Products.badCatalog(Stacks.catalogName, cat.status())));
                return;
            }
            String[] avail = new String[products.size()];
            AtomicInteger left = new AtomicInteger(avail.length + 1);
            Runnable one = () -> {
                if (left.decrementAndGet() == 0) {
                    Stacks.ANSWERED.incrementAndGet();
                    reply.accept(new Stacks.Answer(200, "application/json", Products.answer(products, avail, Stacks.FALLBACKS), null));
                }
            };
            for (int i = 0; i < avail.length; i++) {
                final int k = i;
                String url = Products.itemUrl(Stacks.inventoryBase, products.get(i));
                if (url == null) {
                    one.run();
                    continue;
                }
                get(url, new String[0][], Stacks.timeoutNs, r -> {
                    avail[k] = r.failure() == null ? Products.availability(r.status(), r.body()) : null;
                    one.run();
                });
            }
            one.run();
        });
    }

    /** /caller/ping: the insert on a worker, then callme called on the loops. */
    static void caller(String[] tr, Consumer<Stacks.Answer> reply) {
        String span = Trace.hex(8), child = Trace.hex(8);
        if (Stacks.callme == null) {
            reply.accept(Stacks.traced(404, tr, span, "no callme: start with CALLME_URL\n"));
            return;
        }
        workers.execute(() -> {
            long id;
            try {
                id = Stacks.store();
            } catch (SQLException e) {
                reply.accept(Stacks.traced(503, tr, span, "event store failed: " + e.getMessage()));
                return;
            }
            get(Stacks.callme, Trace.forward(tr, span, child), Stacks.timeoutNs, r -> {
                if (r.failure() != null)
                    reply.accept(Stacks.traced(r.failure() instanceof TimeoutException ? 504 : 502, tr, span,
                                               failure(Stacks.callmeName, r.failure())));
                else if (r.status() / 100 != 2)
                    reply.accept(Stacks.traced(502, tr, span, "upstream " + Stacks.callmeName + ": answered " + r.status()));
                else
                    reply.accept(Stacks.traced(200, tr, span, Stacks.callerBody(id, r.body())));
            });
        });
    }

    static final class Routes extends SimpleChannelInboundHandler<FullHttpRequest> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
            boolean keepAlive = HttpUtil.isKeepAlive(req);
            boolean head = req.method().equals(HttpMethod.HEAD);
            Consumer<Stacks.Answer> reply = a -> send(ctx, keepAlive, head, a);
            if (!req.decoderResult().isSuccess()) {
                send(ctx, false, false, Stacks.text(400, "bad request\n"));
                return;
            }
            if (!head && !req.method().equals(HttpMethod.GET)) {
                reply.accept(Stacks.text(405, "method not allowed\n"));
                return;
            }
            String uri = req.uri();
            int q = uri.indexOf('?');
            String path = q < 0 ? uri : uri.substring(0, q);
            var h = req.headers();
            switch (path) {
                case "/example" -> workers.execute(() -> reply.accept(Stacks.text(200, Stacks.example())));
                case "/api/products" -> products(reply);
                case "/callme/ping" -> {
                    String[] tr = Trace.incoming(h::get);
                    workers.execute(() -> reply.accept(Stacks.callmePing(tr)));
                }
                case "/caller/ping" -> caller(Trace.incoming(h::get), reply);
                case "/metrics" -> reply.accept(Stacks.metrics());
                case "/healthz", "/readyz" -> reply.accept(Stacks.text(200, "OK"));
                default -> reply.accept(Stacks.text(404, "not found\n"));
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable e) {
            ctx.close();
        }
    }

    public static void main(String[] args) throws Exception {
        int cpus = Runtime.getRuntime().availableProcessors();
        int nloops = Stacks.intEnv("netty", "LOOPS", 2 * cpus, 1, 4096);
        int nworkers = Stacks.intEnv("netty", "WORKERS", 20, 1, 4096);
        Stacks.configure("netty");
        loops = new NioEventLoopGroup(nloops);
        EventLoopGroup boss = new NioEventLoopGroup(1);
        workers = Executors.newFixedThreadPool(nworkers);
        Channel server = new ServerBootstrap().group(boss, loops).channel(NioServerSocketChannel.class)
            .option(ChannelOption.SO_BACKLOG, 1024)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childHandler(new ChannelInitializer<SocketChannel>() {
                @Override
                protected void initChannel(SocketChannel ch) {
                    ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(1 << 16), new Routes());
                }
            })
            .bind(new InetSocketAddress(Stacks.host, Stacks.port)).sync().channel();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close().awaitUninterruptibly(2, TimeUnit.SECONDS);
            loops.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            workers.shutdownNow();
        }));
        System.err.println(Stacks.settings("netty-" + io.netty.util.Version.identify().values().iterator().next().artifactVersion(),
                "event-loops=" + nloops + " workers=" + nworkers));
        System.err.println("netty: ready loops=" + nloops + " workers=" + nworkers + " app=" + Stacks.app
                + " port=" + ((InetSocketAddress) server.localAddress()).getPort() + " java=" + System.getProperty("java.version"));
    }
}
