package io.npmagent.agent.config;

import java.util.Locale;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.Logger;

/** {@code LogLevel} (debug, info, warning, error) onto java.util.logging, which System.Logger writes through. */
public final class LogLevels {
    private LogLevels() {}

    public static void apply(String level) {
        Level jul = switch (level.toLowerCase(Locale.ROOT)) {
            case "debug" -> Level.FINE;
            case "warning" -> Level.WARNING;
            case "error" -> Level.SEVERE;
            default -> Level.INFO;
        };
        Logger root = Logger.getLogger("");
        root.setLevel(jul);
        for (Handler h : root.getHandlers()) {
            h.setLevel(jul);
        }
    }
}
