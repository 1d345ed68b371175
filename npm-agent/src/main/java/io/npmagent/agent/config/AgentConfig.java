package io.npmagent.agent.config;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import io.npmagent.agent.backend.Backends;
import io.npmagent.agent.source.manifest.SafeYaml;
import io.npmagent.bpf.libbpf.Capabilities;
import io.npmagent.dataplane.bandwidth.BandwidthSettings;
import io.npmagent.dataplane.bandwidth.FlowControl;
import io.npmagent.dataplane.batch.QueueConfig;
import io.npmagent.dataplane.model.ApiSyntax;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The agent's configuration file (JSON or YAML, mounted from a ConfigMap): Azure NPM's keys and ours,
 * merged over the defaults (a missing key keeps its default) and validated as a whole: one bad value
 * rejects the file, with every bad key and why, and whoever holds the previous configuration keeps it.
 *
 * <p>NPM's keys: {@code NetPolInBackground} (also under {@code Toggles}, where NPM puts it),
 * {@code MaxPendingNetPols}, {@code NetPolIntervalInMilliseconds} and NPM's spelling
 * {@code NetPolInvervalInMilliseconds}, {@code ResyncPeriodInMinutes}, {@code ListeningPort},
 * {@code ListeningAddress}, {@code LogLevel}, {@code Toggles.*}. Ours: {@code NetPolAdaptiveBatching}
 * (see {@link QueueConfig}), {@code DebugListeningPort} and
 * {@code DebugListeningAddress} (the debug endpoints; localhost unless set), {@code Backend},
 * {@code BpffsPath}, {@code CgroupRoot} (the cgroup2 directory holding the pods' processes, "" for none; a directory whose
 * {@code unified} is the cgroup2 mount of a hybrid node means that), {@code EdtHorizonInMilliseconds}, {@code EcnThresholdInMilliseconds},
 * {@code IngressBurstInMilliseconds}, {@code Bbr}, {@code EdtFlowControl}, {@code BigTcp}, {@code ReconcilePeriodInSeconds}, and the
 * {@code Flows} object ({@link FlowConfig}: {@code Denied}, {@code Allowed}, {@code RatePerSecond}, {@code IntervalSeconds},
 * {@code RetentionMinutes}, {@code MaxFlows}, {@code Events}; named {@code Flows.Denied} and so on in problems and reloads). Keys NPM has that
 * we do not use ({@code MaxBatchedACLsPerPod}, {@code ApplyIntervalInMilliseconds}, ...) are reported
 * as ignored, never errors, so NPM's own ConfigMap loads.
 */
public record AgentConfig(
        QueueConfig queue,
        Duration resyncPeriod,
        int listeningPort,
        String listeningAddress,
        int debugListeningPort,
        String debugListeningAddress,
        String logLevel,
        Map<String, Boolean> toggles,
        String backend,
        Path bpffs,
        Path cgroupRoot,
        BandwidthSettings bandwidth,
        Duration reconcilePeriod,
        FlowConfig flows) {

    public static final AgentConfig DEFAULTS = new AgentConfig(QueueConfig.DEFAULTS, Duration.ofMinutes(15), 10091, "0.0.0.0", 10092, "127.0.0.1", "info",
            Map.of(), "auto", Capabilities.DEFAULT_BPFFS, null, BandwidthSettings.DEFAULTS, Duration.ofSeconds(10),
            FlowConfig.DEFAULTS);

    static final Set<String> LOG_LEVELS = Set.of("debug", "info", "warning", "error");
    private static final Set<String> QUEUE_KEYS = Set.of("NetPolInBackground", "NetPolAdaptiveBatching", "MaxPendingNetPols",
            "NetPolIntervalInMilliseconds", "NetPolInvervalInMilliseconds");
    /** NPM's keys this agent has no use for: accepted and reported, so an NPM ConfigMap loads as it is. */
    static final Set<String> NPM_UNUSED = Set.of("MaxBatchedACLsPerPod", "ApplyIntervalInMilliseconds", "ApplyMaxBatches",
            "NetPolBatchSize", "TransportType", "WindowsNetworkName");

    public AgentConfig {
        toggles = Map.copyOf(toggles);
    }

    /** A file that was read: the configuration, and the keys it ignored. */
    public record Loaded(AgentConfig config, List<String> ignored) {}

    /** A file that cannot be used; {@link #problems()} names each bad key and why. */
    public static final class Rejected extends Exception {
        private static final long serialVersionUID = 1L;
        private final List<String> problems;

        Rejected(List<String> problems) {
            super(String.join("; ", problems));
            this.problems = List.copyOf(problems);
        }

        public List<String> problems() {
            return problems;
        }
    }

    /** Reads {@code text}, a JSON or YAML object of settings. */
    public static Loaded parse(String text) throws Rejected {
        JsonElement root;
        try {
            root = SafeYaml.parseText(text);
        } catch (SafeYaml.BadYaml e) {
            throw new Rejected(List.of(e.getMessage()));
        }
        if (root == null) {
            return new Loaded(DEFAULTS, List.of());
        }
        if (!root.isJsonObject()) {
            throw new Rejected(List.of("the file must hold an object of settings, not " + kind(root)));
        }
        return fromSettings(root.getAsJsonObject());
    }

    static Loaded fromSettings(JsonObject o) throws Rejected {
        List<String> problems = new ArrayList<>();
        List<String> ignored = new ArrayList<>();
        Map<String, Object> queue = new HashMap<>();
        Map<String, Boolean> toggles = new TreeMap<>();
        Settings s = new Settings(problems);
        for (Map.Entry<String, JsonElement> e : o.entrySet()) {
            String key = e.getKey();
            if (key.equals("Toggles")) {
                toggles(e.getValue(), toggles, queue, problems);
            } else if (key.equals("Flows")) {
                s.flows(e.getValue(), ignored);
            } else if (QUEUE_KEYS.contains(key)) {
                if (key.equals("NetPolInBackground") && queue.containsKey(key)) {
                    problems.add("NetPolInBackground: set both at the top and under Toggles; set one");
                }
                queue.put(key, scalar(e.getValue()));
            } else if (!s.known(key, e.getValue())) {
                ignored.add(ApiSyntax.escapeControls(key) + (NPM_UNUSED.contains(key) ? " (an NPM key this agent does not use)" : " (unknown)"));
            }
        }
        QueueConfig queueConfig = DEFAULTS.queue;
        try {
            queueConfig = QueueConfig.fromSettings(queue);
        } catch (IllegalArgumentException e) {
            problems.add(e.getMessage());
        }
        BandwidthSettings bandwidth = DEFAULTS.bandwidth;
        try {
            bandwidth = new BandwidthSettings(s.horizon, s.ecn, s.burst, s.bbr, s.flowControl, s.bigTcp);
        } catch (IllegalArgumentException e) {
            problems.add("EdtHorizonInMilliseconds, EcnThresholdInMilliseconds, IngressBurstInMilliseconds: " + e.getMessage());
        }
        if (!problems.isEmpty()) {
            throw new Rejected(problems);
        }
        return new Loaded(new AgentConfig(queueConfig, s.resync, s.port, s.address, s.debugPort, s.debugAddress, s.logLevel, toggles, s.backend, s.bpffs, s.cgroupRoot, bandwidth,
                s.reconcile, s.flows()), List.copyOf(ignored));
    }

    private static void toggles(JsonElement v, Map<String, Boolean> toggles, Map<String, Object> queue, List<String> problems) {
        if (!v.isJsonObject()) {
            problems.add("Toggles: expected an object of true/false settings, not " + kind(v));
            return;
        }
        for (Map.Entry<String, JsonElement> t : v.getAsJsonObject().entrySet()) {
            String key = "Toggles." + ApiSyntax.escapeControls(t.getKey());
            Boolean b = bool(t.getValue());
            if (b == null) {
                problems.add(key + ": expected true or false, not " + text(t.getValue()));
            } else if (t.getKey().equals("NetPolInBackground")) {
                if (queue.containsKey("NetPolInBackground")) {
                    problems.add("NetPolInBackground: set both at the top and under Toggles; set one");
                }
                queue.put("NetPolInBackground", b);
            } else {
                toggles.put(t.getKey(), b);
            }
        }
    }

    /** The settings of ours and NPM's other scalar keys, read one by one, problems collected. */
    private static final class Settings {
        private final List<String> problems;
        Duration resync = DEFAULTS.resyncPeriod;
        int port = DEFAULTS.listeningPort;
        String address = DEFAULTS.listeningAddress;
        int debugPort = DEFAULTS.debugListeningPort;
        String debugAddress = DEFAULTS.debugListeningAddress;
        String logLevel = DEFAULTS.logLevel;
        String backend = DEFAULTS.backend;
        Path bpffs = DEFAULTS.bpffs;
        Path cgroupRoot = DEFAULTS.cgroupRoot;
        Duration horizon = DEFAULTS.bandwidth.horizon();
        Duration ecn = DEFAULTS.bandwidth.ecnThreshold();
        Duration burst = DEFAULTS.bandwidth.ingressBurst();
        boolean bbr = DEFAULTS.bandwidth.bbr();
        FlowControl flowControl = DEFAULTS.bandwidth.flowControl();
        boolean bigTcp = DEFAULTS.bandwidth.bigTcp();
        Duration reconcile = DEFAULTS.reconcilePeriod;
        boolean flowsDenied = DEFAULTS.flows.denied();
        boolean flowsAllowed = DEFAULTS.flows.allowed();
        int flowRate = DEFAULTS.flows.ratePerSecond();
        int flowInterval = DEFAULTS.flows.intervalSeconds();
        int flowRetention = DEFAULTS.flows.retentionMinutes();
        int maxFlows = DEFAULTS.flows.maxFlows();
        boolean flowEvents = DEFAULTS.flows.events();

        Settings(List<String> problems) {
            this.problems = problems;
        }

        /** A true/false key's value; a problem and {@code current} if it is neither. */
        private boolean flag(String key, JsonElement v, boolean current) {
            Boolean b = bool(v);
            if (b == null) {
                problems.add(key + ": expected true or false, not " + text(v));
                return current;
            }
            return b;
        }

        /** Reads the {@code Flows} object; its keys are named {@code Flows.<key>} in problems; unknown ones are reported as ignored, as at the top. */
        void flows(JsonElement v, List<String> ignored) {
            if (!v.isJsonObject()) {
                problems.add("Flows: expected an object (Denied, Allowed, RatePerSecond, IntervalSeconds, RetentionMinutes, MaxFlows, Events), not "
                        + kind(v));
                return;
            }
            for (Map.Entry<String, JsonElement> f : v.getAsJsonObject().entrySet()) {
                String key = "Flows." + ApiSyntax.escapeControls(f.getKey());
                JsonElement value = f.getValue();
                switch (f.getKey()) {
                    case "Denied" -> flowsDenied = flag(key, value, flowsDenied);
                    case "Allowed" -> flowsAllowed = flag(key, value, flowsAllowed);
                    case "RatePerSecond" -> flowRate = (int) number(key, value, 1, 1_000_000, flowRate);
                    case "IntervalSeconds" -> flowInterval = (int) number(key, value, 1, 3600, flowInterval);
                    case "RetentionMinutes" -> flowRetention = (int) number(key, value, 1, 24 * 60, flowRetention);
                    case "MaxFlows" -> maxFlows = (int) number(key, value, 1, 10_000_000, maxFlows);
                    case "Events" -> flowEvents = flag(key, value, flowEvents);
                    default -> ignored.add(key + " (unknown; Flows has Denied, Allowed, RatePerSecond, IntervalSeconds, RetentionMinutes, MaxFlows, Events)");
                }
            }
        }

        FlowConfig flows() {
            return new FlowConfig(flowsDenied, flowsAllowed, flowRate, flowInterval, flowRetention, maxFlows, flowEvents);
        }

        /** Reads {@code key} if it is one of ours or NPM's; false if it is not. */
        boolean known(String key, JsonElement v) {
            switch (key) {
                case "ResyncPeriodInMinutes" -> resync = Duration.ofMinutes(number(key, v, 1, 24 * 60, resync.toMinutes()));
                case "ListeningPort" -> port = (int) number(key, v, 1, 65535, port);
                case "ListeningAddress" -> address = string(key, v, address);
                case "DebugListeningPort" -> debugPort = (int) number(key, v, 1, 65535, debugPort);
                case "DebugListeningAddress" -> debugAddress = string(key, v, debugAddress);
                case "LogLevel" -> {
                    String level = string(key, v, logLevel).toLowerCase(java.util.Locale.ROOT);
                    if (LOG_LEVELS.contains(level)) {
                        logLevel = level;
                    } else {
                        problems.add(key + ": one of debug, info, warning, error, not " + text(v));
                    }
                }
                case "Backend" -> {
                    String b = string(key, v, backend);
                    if (Backends.NAMES.contains(b)) {
                        backend = b;
                    } else {
                        problems.add(key + ": one of " + String.join(", ", Backends.NAMES) + ", not " + text(v));
                    }
                }
                case "BpffsPath" -> {
                    String p = string(key, v, bpffs.toString());
                    if (p.startsWith("/")) {
                        bpffs = Path.of(p);
                    } else {
                        problems.add(key + ": an absolute path, not " + text(v));
                    }
                }
                case "CgroupRoot" -> {
                    boolean none = v.isJsonPrimitive() && v.getAsJsonPrimitive().isString() && v.getAsString().isEmpty();
                    String p = none ? "" : string(key, v, cgroupRoot == null ? "" : cgroupRoot.toString());
                    if (p.isEmpty()) {
                        cgroupRoot = null;
                    } else if (p.startsWith("/")) {
                        cgroupRoot = Path.of(p);
                    } else {
                        problems.add(key + ": an absolute path or \"\" (none), not " + text(v));
                    }
                }
                case "EdtHorizonInMilliseconds" -> horizon = Duration.ofMillis(number(key, v, 1, 10_000, horizon.toMillis()));
                case "EcnThresholdInMilliseconds" -> ecn = Duration.ofMillis(number(key, v, 1, 10_000, ecn.toMillis()));
                case "IngressBurstInMilliseconds" -> burst = Duration.ofMillis(number(key, v, 1, 10_000, burst.toMillis()));
                case "Bbr" -> bbr = flag(key, v, bbr);
                case "BigTcp" -> bigTcp = flag(key, v, bigTcp);
                case "EdtFlowControl" -> {
                    try {
                        flowControl = FlowControl.of(string(key, v, flowControl.label()));
                    } catch (IllegalArgumentException e) {
                        problems.add(key + ": " + e.getMessage());
                    }
                }
                case "ReconcilePeriodInSeconds" -> reconcile = Duration.ofSeconds(number(key, v, 1, 24 * 3600, reconcile.toSeconds()));
                default -> {
                    return false;
                }
            }
            return true;
        }

        private long number(String key, JsonElement v, long min, long max, long keep) {
            if (v.isJsonPrimitive() && v.getAsJsonPrimitive().isNumber()) {
                double d = v.getAsDouble();
                if (d == Math.rint(d) && d >= min && d <= max) {
                    return (long) d;
                }
                problems.add(key + ": a whole number from " + min + " to " + max + ", not " + text(v));
                return keep;
            }
            problems.add(key + ": expected a number, not " + text(v));
            return keep;
        }

        private String string(String key, JsonElement v, String keep) {
            if (v.isJsonPrimitive() && v.getAsJsonPrimitive().isString() && !v.getAsString().isBlank()) {
                return v.getAsString().strip();
            }
            problems.add(key + ": expected a non-empty string, not " + text(v));
            return keep;
        }
    }

    private static Boolean bool(JsonElement v) {
        return v.isJsonPrimitive() && v.getAsJsonPrimitive().isBoolean() ? v.getAsBoolean() : null;
    }

    /** A queue key's value as QueueConfig.fromSettings reads it. */
    private static Object scalar(JsonElement v) {
        if (v.isJsonPrimitive()) {
            JsonPrimitive p = v.getAsJsonPrimitive();
            return p.isBoolean() ? p.getAsBoolean() : p.isNumber() ? p.getAsNumber() : p.getAsString();
        }
        return v.toString();
    }

    private static String text(JsonElement v) {
        return v.isJsonPrimitive() && v.getAsJsonPrimitive().isString() ? ApiSyntax.quote(v.getAsString()) : ApiSyntax.quote(v.toString());
    }

    private static String kind(JsonElement v) {
        return v.isJsonArray() ? "a list" : v.isJsonPrimitive() ? "a single value" : "null";
    }

    /** This configuration with the keys that change at run time ({@link ConfigReload}) taken from {@code next}. */
    public AgentConfig withRunTimeKeysOf(AgentConfig next) {
        return new AgentConfig(next.queue, resyncPeriod, listeningPort, listeningAddress, debugListeningPort, debugListeningAddress,
                next.logLevel, toggles, backend, bpffs, cgroupRoot, bandwidth, reconcilePeriod, flows.withRunTimeKeysOf(next.flows));
    }

    /** Each setting and its value, by the file's key names: what a reload compares. */
    public Map<String, Object> byKey() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("NetPolInBackground", queue.background());
        m.put("NetPolAdaptiveBatching", queue.adaptive());
        m.put("MaxPendingNetPols", queue.maxPendingNetPols());
        m.put("NetPolIntervalInMilliseconds", queue.interval().toMillis());
        m.put("LogLevel", logLevel);
        m.put("ResyncPeriodInMinutes", resyncPeriod.toMinutes());
        m.put("ListeningPort", listeningPort);
        m.put("ListeningAddress", listeningAddress);
        m.put("DebugListeningPort", debugListeningPort);
        m.put("DebugListeningAddress", debugListeningAddress);
        toggles.forEach((k, v) -> m.put("Toggles." + k, v));
        m.put("Backend", backend);
        m.put("BpffsPath", bpffs.toString());
        m.put("CgroupRoot", cgroupRoot == null ? "" : cgroupRoot.toString());
        m.put("EdtHorizonInMilliseconds", bandwidth.horizon().toMillis());
        m.put("EcnThresholdInMilliseconds", bandwidth.ecnThreshold().toMillis());
        m.put("IngressBurstInMilliseconds", bandwidth.ingressBurst().toMillis());
        m.put("Bbr", bandwidth.bbr());
        m.put("EdtFlowControl", bandwidth.flowControl().label());
        m.put("BigTcp", bandwidth.bigTcp());
        m.put("ReconcilePeriodInSeconds", reconcilePeriod.toSeconds());
        m.put("Flows.Denied", flows.denied());
        m.put("Flows.Allowed", flows.allowed());
        m.put("Flows.RatePerSecond", flows.ratePerSecond());
        m.put("Flows.IntervalSeconds", flows.intervalSeconds());
        m.put("Flows.RetentionMinutes", flows.retentionMinutes());
        m.put("Flows.MaxFlows", flows.maxFlows());
        m.put("Flows.Events", flows.events());
        return m;
    }
}
