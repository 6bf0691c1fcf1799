// A JDK service (com.sun.net.httpserver) that drains in a shutdown hook:
// drain-test's differential test runs it with `java Server.java`. On
// SIGTERM the JVM runs its shutdown hooks and then exits 143 (128 + 15):
// a handled exit. MODE=good (the default): readiness 503 for PRE_DRAIN_MS,
// then stop(STOP_S, default 1) closes the listener and waits up to STOP_S
// seconds for in-flight exchanges. MODE=stopnow: stop(0) at once (the
// listener closes, in-flight exchanges are cut). /slow takes SLOW_MS
// (/slow?ms=N: N ms); /readiness, /healthcheck and /api/items are the
// docs' examples' paths.
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;

public class Server {
    static volatile boolean draining = false;

    static void send(HttpExchange ex, int status, String body) throws IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "text/plain");
        ex.sendResponseHeaders(status, b.length);
        try (OutputStream os = ex.getResponseBody()) {
            os.write(b);
        }
    }

    static long env(String k, long d) {
        String v = System.getenv(k);
        return v == null || v.isEmpty() ? d : Long.parseLong(v);
    }

    public static void main(String[] args) throws Exception {
        String mode = System.getenv().getOrDefault("MODE", "good");
        long pre = env("PRE_DRAIN_MS", 0), slow = env("SLOW_MS", 1500);
        HttpServer s = HttpServer.create(new InetSocketAddress("127.0.0.1", (int) env("PORT", 0)), 128);
        // A thread per exchange: traffic to a 3 s path at 10 a second from
        // each of two clients is 60 exchanges at once.
        s.setExecutor(Executors.newCachedThreadPool());
        long stopS = env("STOP_S", 1);
        s.createContext("/ready", ex -> send(ex, draining ? 503 : 200, draining ? "draining\n" : "ready\n"));
        s.createContext("/live", ex -> send(ex, 200, "alive\n"));
        s.createContext("/readiness", ex -> send(ex, draining ? 503 : 200, draining ? "draining\n" : "ready\n"));
        s.createContext("/healthcheck", ex -> send(ex, 200, "alive\n"));
        s.createContext("/api/items", ex -> send(ex, 200, "{\"items\":[1,2,3]}\n"));
        s.createContext("/app", ex -> send(ex, 200, "hello from the JVM\n"));
        // curl's differential test judges --expect-json and --expect-header
        // here: a JSON document, a header of the app's, one sent twice.
        s.createContext("/status", ex -> {
            ex.getResponseHeaders().set("X-App-Status", "ready");
            ex.getResponseHeaders().add("X-Check", "first");
            ex.getResponseHeaders().add("X-Check", "second");
            byte[] b = "{\"status\":\"ready\",\"checks\":{\"db\":\"ok\"},\"version\":3}".getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().set("Content-Type", "application/json");
            ex.sendResponseHeaders(200, b.length);
            try (OutputStream os = ex.getResponseBody()) {
                os.write(b);
            }
        });
        s.createContext("/slow", ex -> {
            long ms = slow;
            String q = ex.getRequestURI().getQuery();
            if (q != null && q.startsWith("ms=")) {
                ms = Long.parseLong(q.substring(3));
            }
            try {
                Thread.sleep(ms);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            send(ex, 200, "slow done " + "x".repeat(4096) + "\n");
        });
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            draining = true;
            if (mode.equals("stopnow")) {
                s.stop(0);
                return;
            }
            try {
                Thread.sleep(pre);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            s.stop((int) stopS);
        }));
        s.start();
    }
}
