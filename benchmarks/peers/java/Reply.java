// Reply.java - the one way the Java peers answer (Example, Gateway, Chain): a status, a
// Content-Type and a UTF-8 body with its length; HEAD gets the head alone. Closes the exchange.
// Headers the caller set on ex beforehand (Chain's traceparent) go out with it.
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

final class Reply {
    private Reply() {}

    static void send(HttpExchange ex, int status, String type, String body) throws IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", type);
        if ("HEAD".equals(ex.getRequestMethod())) {
            ex.sendResponseHeaders(status, -1);
        } else {
            ex.sendResponseHeaders(status, b.length);
            try (OutputStream os = ex.getResponseBody()) {
                os.write(b);
            }
        }
        ex.close();
    }
}
