package io.npmagent.harness.monitoring;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;

/**
 * Alertmanager's webhook receiver for a test cluster: {@code AlertReceiverMain PORT FILE} listens on
 * 127.0.0.1:PORT (the node's loopback, where Alertmanager runs) and appends every notification it is sent to
 * FILE, one JSON object a line: {@code {"receivedAt": ..., "notification": <Alertmanager's body>}}
 * ({@link AlertLog} reads it). A body that is not JSON is answered 400 and not recorded.
 */
public final class AlertReceiverMain {
    private AlertReceiverMain() {}

    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            System.err.println("usage: AlertReceiverMain PORT FILE");
            System.exit(2);
        }
        Path file = Path.of(args[1]);
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), Integer.parseInt(args[0])), 16);
        server.createContext("/", exchange -> {
            try (exchange; InputStream body = exchange.getRequestBody()) {
                String text = new String(body.readAllBytes(), StandardCharsets.UTF_8);
                JsonObject line = new JsonObject();
                line.addProperty("receivedAt", Instant.now().toString());
                try {
                    line.add("notification", JsonParser.parseString(text).getAsJsonObject());
                } catch (RuntimeException e) {
                    exchange.sendResponseHeaders(400, -1);
                    return;
                }
                synchronized (AlertReceiverMain.class) {
                    Files.writeString(file, line + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
                }
                System.out.println("alert-receiver: " + line.getAsJsonObject("notification").get("status") + " "
                        + line.getAsJsonObject("notification").get("groupLabels"));
                exchange.sendResponseHeaders(200, -1);
            }
        });
        server.start();
        System.out.println("alert-receiver: listening on 127.0.0.1:" + args[0] + ", recording to " + file);
    }
}
