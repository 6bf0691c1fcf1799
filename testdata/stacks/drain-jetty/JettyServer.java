// Jetty 9.4 (Debian's jetty9 jars, embedded) stopping the way its docs say
// a graceful stop is made: a StatisticsHandler around the application and
// a stop timeout, so Server.stop() closes the connectors, lets the requests
// in flight finish (their answers carry Connection: close), then stops.
// drain-test's differential test (drain_truth_jetty.txtar) runs it.
//
// MODE=good (the default): on SIGTERM a shutdown hook answers readiness 503
// for PRE_DRAIN_MS, then stops gracefully (STOP_MS, default 3000). /slow
// (SLOW_MS, or ?ms=N) writes its answer after the wait, without a
// Content-Length: during the stop Jetty ends it by closing the connection
// (a close-delimited body, RFC 9112 section 6.3), and the JVM exits soon
// after. MODE=stopnow: no pre-drain and a stop timeout of 0: the requests
// in flight are cut.
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.AbstractHandler;
import org.eclipse.jetty.server.handler.StatisticsHandler;

public class JettyServer {
    static volatile boolean draining = false;

    static long env(String k, long d) {
        String v = System.getenv(k);
        return v == null || v.isEmpty() ? d : Long.parseLong(v);
    }

    static void send(HttpServletResponse resp, int status, String body) throws IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        resp.setStatus(status);
        resp.setContentType("text/plain");
        resp.setContentLength(b.length);
        resp.getOutputStream().write(b);
    }

    public static void main(String[] args) throws Exception {
        String mode = System.getenv().getOrDefault("MODE", "good");
        long pre = env("PRE_DRAIN_MS", 0), slow = env("SLOW_MS", 1500);
        Server server = new Server();
        ServerConnector conn = new ServerConnector(server);
        conn.setHost("127.0.0.1");
        conn.setPort((int) env("PORT", 0));
        server.addConnector(conn);
        AbstractHandler app = new AbstractHandler() {
            @Override
            public void handle(String target, Request base, HttpServletRequest req, HttpServletResponse resp) throws IOException {
                base.setHandled(true);
                switch (target) {
                    case "/ready":
                        send(resp, draining ? 503 : 200, draining ? "draining\n" : "ready\n");
                        return;
                    case "/live":
                        send(resp, 200, "alive\n");
                        return;
                    case "/app":
                        send(resp, 200, "hello from Jetty\n");
                        return;
                    case "/slow":
                        long ms = slow;
                        String q = req.getParameter("ms");
                        if (q != null) {
                            ms = Long.parseLong(q);
                        }
                        try {
                            Thread.sleep(ms);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                        resp.setStatus(200);
                        resp.setContentType("text/plain");
                        OutputStream os = resp.getOutputStream();
                        os.write(("done after " + ms + " ms\n").getBytes(StandardCharsets.UTF_8));
                        os.flush(); // committed without a length
                        os.write("the rest of the answer\n".getBytes(StandardCharsets.UTF_8));
                        return;
                    default:
                        send(resp, 404, "not found\n");
                }
            }
        };
        StatisticsHandler stats = new StatisticsHandler();
        stats.setHandler(app);
        server.setHandler(stats);
        boolean good = !mode.equals("stopnow");
        server.setStopTimeout(good ? env("STOP_MS", 3000) : 0);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                if (good) {
                    draining = true;
                    Thread.sleep(pre);
                }
                server.stop();
            } catch (Exception e) {
                e.printStackTrace();
            }
        }));
        server.start();
        server.join();
    }
}
