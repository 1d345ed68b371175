package io.npmagent.pipelines.bench;

import com.google.gson.GsonBuilder;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The JSON every benchmark writes: the command that reproduces it, the machine, and its rows. */
public final class BenchJson {
    private BenchJson() {}

    public static String document(String command, List<Map<String, Object>> results) {
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("command", command);
        doc.put("cores", Runtime.getRuntime().availableProcessors());
        doc.put("kernel", System.getProperty("os.version"));
        doc.put("results", results);
        return new GsonBuilder().setPrettyPrinting().disableHtmlEscaping().serializeNulls().create().toJson(doc) + "\n";
    }
}
