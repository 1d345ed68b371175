package io.npmagent.bpf.libbpf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** libbpf's printf-style messages arrive, formatted, in the agent's log (java.util.logging behind System.Logger). */
class LibBpfLogTest {
    private final Logger logger = Logger.getLogger("io.npmagent.bpf.libbpf");
    private final List<LogRecord> records = new ArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord record) {
            synchronized (records) {
                records.add(record);
            }
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    };

    @BeforeEach
    void listen() {
        logger.addHandler(capture);
    }

    @AfterEach
    void stop() {
        logger.removeHandler(capture);
    }

    @Test
    void aLibbpfWarningIsLoggedWithItsArgumentsFormatted() {
        assertThatThrownBy(() -> BpfObject.open(new byte[] {0x7f, 'E', 'L', 'X'}, "npm_garbled", null)).isInstanceOf(BpfException.class);
        synchronized (records) {
            assertThat(records).anySatisfy(r -> {
                assertThat(r.getLevel()).isEqualTo(Level.WARNING);
                // "%s" in libbpf's format, filled in by vsnprintf from the va_list.
                assertThat(r.getMessage()).contains("'npm_garbled'").contains("not a proper ELF object");
            });
        }
    }
}
