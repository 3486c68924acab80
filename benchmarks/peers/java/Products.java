// Products.java - the gateway's answer as primed's (docs/gateway.md, src/gateway.c), shared by every
// Java gateway (Gateway.java on the JDK's HttpServer, TomcatPeer.java, NettyPeer.java): the
// catalog's top-level objects as written, each product's inventory URL, the availability check
// (200, one JSON object of at most 512 bytes) and the merged answer. No I/O here.
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

final class Products {
    static final int AVAILABILITY_MAX = 512;
    private static final Pattern ITEM_ID = Pattern.compile("\"itemId\"\\s*:\\s*\"([A-Za-z0-9._-]{1,32})\"");

    private Products() {}

    /** The top-level objects of a JSON array, as written; null when it is not an array of objects. */
    static List<String> objects(String s) {
        List<String> out = new ArrayList<>();
        int i = skip(s, 0);
        if (i >= s.length() || s.charAt(i) != '[') return null;
        i = skip(s, i + 1);
        if (i < s.length() && s.charAt(i) == ']') return skip(s, i + 1) == s.length() ? out : null;
        while (i < s.length()) {
            if (s.charAt(i) != '{') return null;
            int start = i, depth = 0;
            boolean str = false;
            for (; i < s.length(); i++) {
                char c = s.charAt(i);
                if (str) {
                    if (c == '\\') i++;
                    else if (c == '"') str = false;
                } else if (c == '"') str = true;
                else if (c == '{' || c == '[') depth++;
                else if ((c == '}' || c == ']') && --depth == 0) break;
            }
            if (i >= s.length()) return null;
            out.add(s.substring(start, ++i));
            i = skip(s, i);
            if (i < s.length() && s.charAt(i) == ',') i = skip(s, i + 1);
            else if (i < s.length() && s.charAt(i) == ']') return skip(s, i + 1) == s.length() ? out : null;
            else return null;
        }
        return null;
    }

    private static int skip(String s, int i) {
        while (i < s.length() && " \t\r\n".indexOf(s.charAt(i)) >= 0) i++;
        return i;
    }

    /** Inventory's answer as the availability to append, or null for the fallback. */
    static String availability(int status, String body) {
        if (status != 200 || body == null) return null;
        String b = body.strip();
        if (b.length() > AVAILABILITY_MAX || !b.startsWith("{") || !b.endsWith("}")) return null;
        return b;
    }

    /** The merged answer; each null availability counts one in fallbacks. */
    static String answer(List<String> products, String[] avail, AtomicLong fallbacks) {
        StringBuilder sb = new StringBuilder(4096).append('[');
        for (int i = 0; i < products.size(); i++) {
            String p = products.get(i);
            if (i > 0) sb.append(',');
            if (avail[i] == null) fallbacks.incrementAndGet();
            sb.append(p, 0, p.lastIndexOf('}')).append(",\"availability\":")
              .append(avail[i] == null ? "null" : avail[i]).append('}');
        }
        return sb.append(']').toString();
    }

    /** base + "/api/inventory/" + the product's itemId, or null when it has none. */
    static String itemUrl(String inventoryBase, String product) {
        Matcher m = ITEM_ID.matcher(product);
        return m.find() ? inventoryBase + "/api/inventory/" + m.group(1) : null;
    }

    /** The 502 text for a catalog that answered status or something that is not an array of objects. */
    static String badCatalog(String name, int status) {
        return "upstream " + name + ": " + (status != 200 ? "answered " + status : "not a JSON array of objects");
    }
}
