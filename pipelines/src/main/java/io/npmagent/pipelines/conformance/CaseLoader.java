package io.npmagent.pipelines.conformance;

import io.npmagent.agent.source.manifest.Manifests;
import io.npmagent.agent.source.manifest.ParsedManifests;
import io.npmagent.dataplane.model.ClusterEvent;
import io.npmagent.dataplane.model.ContainerPort;
import io.npmagent.dataplane.model.IpAddress;
import io.npmagent.dataplane.model.Namespace;
import io.npmagent.dataplane.model.NetworkPolicy;
import io.npmagent.dataplane.model.Pod;
import io.npmagent.dataplane.model.PodKey;
import io.npmagent.dataplane.model.PolicyKey;
import io.npmagent.dataplane.model.Protocol;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * Reads the conformance model and cases. Policies in a case go through the same manifest conversion
 * as the agent's own manifest source, so the cases also test that path. Anything it does not
 * understand (an unknown model change, a malformed expectation) is an error, never skipped.
 */
public final class CaseLoader {
    private CaseLoader() {}

    public static ConformanceModel loadModel(Path file) throws IOException {
        Map<String, Object> doc = read(file);
        List<Namespace> namespaces = new ArrayList<>();
        for (Map<String, Object> ns : maps(doc.get("namespaces"))) {
            namespaces.add(new Namespace(string(ns, "name"), stringMap(ns.get("labels"))));
        }
        List<Pod> pods = new ArrayList<>();
        for (Map<String, Object> p : maps(doc.get("pods"))) {
            List<ContainerPort> ports = new ArrayList<>();
            for (Map<String, Object> port : maps(p.get("ports"))) {
                ports.add(new ContainerPort(
                        string(port, "name"), ((Number) port.get("port")).intValue(), Protocol.parse(string(port, "protocol"))));
            }
            pods.add(Pod.builder(string(p, "namespace"), string(p, "name"))
                    .labels(stringMap(p.get("labels")))
                    .ip(IpAddress.parse(string(p, "ip")))
                    .ports(ports)
                    .build());
        }
        return new ConformanceModel(namespaces, pods);
    }

    /** Every {@code *.yaml} case in {@code dir}, by name. */
    public static List<ConformanceCase> loadCases(Path dir) throws IOException {
        List<ConformanceCase> cases = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList()) {
                cases.add(loadCase(f));
            }
        }
        return cases;
    }

    public static ConformanceCase loadCase(Path file) throws IOException {
        Map<String, Object> doc = read(file);
        String name = string(doc, "name");
        List<ConformanceCase.Step> steps = new ArrayList<>();
        for (Map<String, Object> s : maps(doc.get("steps"))) {
            int number = ((Number) s.get("step")).intValue();
            String origin = file.getFileName() + " step " + number;
            steps.add(new ConformanceCase.Step(
                    number,
                    (String) s.get("description"),
                    policies(maps(s.get("apply")), origin),
                    manifests(maps(s.get("apply"))),
                    deletions(maps(s.get("delete"))),
                    modelChanges(maps(s.get("model_changes")), origin),
                    probes(maps(expected(s).get("probes"))),
                    exceptions(maps(expected(s).get("exceptions")))));
        }
        return new ConformanceCase(name, steps);
    }

    private static Map<String, Object> expected(Map<String, Object> step) {
        Object e = step.get("expected");
        if (!(e instanceof Map)) {
            throw new IllegalArgumentException("step " + step.get("step") + " has no expected section");
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> m = (Map<String, Object>) e;
        return m;
    }

    /** Each manifest, a NetworkPolicy or a ClusterNetworkPolicy, as its upsert, in order. */
    private static List<ClusterEvent> policies(List<Map<String, Object>> manifests, String origin) {
        DumperOptions options = new DumperOptions();
        options.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
        Yaml dumper = new Yaml(options);
        List<ClusterEvent> out = new ArrayList<>();
        for (Map<String, Object> m : manifests) {
            ParsedManifests parsed = Manifests.parse(dumper.dump(m), origin);
            if (!parsed.errors().isEmpty() || parsed.policies().size() + parsed.clusterPolicies().size() != 1) {
                throw new IllegalArgumentException(origin + ": a manifest did not convert to one policy: " + parsed.errors());
            }
            out.add(parsed.policies().isEmpty() ? new ClusterEvent.ClusterPolicyUpserted(parsed.clusterPolicies().get(0))
                    : new ClusterEvent.PolicyUpserted(parsed.policies().get(0)));
        }
        return out;
    }

    private static List<String> manifests(List<Map<String, Object>> manifests) {
        DumperOptions options = new DumperOptions();
        options.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
        Yaml dumper = new Yaml(options);
        return manifests.stream().map(dumper::dump).toList();
    }

    /** {@code {namespace, name}}: a NetworkPolicy; {@code {kind: ClusterNetworkPolicy, name}}: a ClusterNetworkPolicy. */
    private static List<ClusterEvent> deletions(List<Map<String, Object>> items) {
        List<ClusterEvent> out = new ArrayList<>();
        for (Map<String, Object> d : items) {
            out.add("ClusterNetworkPolicy".equals(d.get("kind")) ? new ClusterEvent.ClusterPolicyDeleted(string(d, "name"))
                    : new ClusterEvent.PolicyDeleted(new PolicyKey(string(d, "namespace"), string(d, "name"))));
        }
        return out;
    }

    private static List<ConformanceCase.ModelChange> modelChanges(List<Map<String, Object>> items, String origin) {
        List<ConformanceCase.ModelChange> changes = new ArrayList<>();
        for (Map<String, Object> c : items) {
            String op = string(c, "op");
            String target = switch (op) {
                case "add_pod_labels" -> string(c, "pod");
                case "add_namespace_labels" -> string(c, "namespace");
                default -> throw new IllegalArgumentException(origin + ": unknown model change " + op);
            };
            changes.add(new ConformanceCase.ModelChange(op, target, stringMap(c.get("labels"))));
        }
        return changes;
    }

    private static List<ConformanceCase.Probe> probes(List<Map<String, Object>> items) {
        List<ConformanceCase.Probe> probes = new ArrayList<>();
        for (Map<String, Object> p : items) {
            String def = string(p, "default");
            if (!def.equals("allow") && !def.equals("deny")) {
                throw new IllegalArgumentException("probe default must be allow or deny, not " + def);
            }
            probes.add(new ConformanceCase.Probe(
                    ((Number) p.get("port")).intValue(), Protocol.parse(string(p, "protocol")), def.equals("allow")));
        }
        return probes;
    }

    private static Map<ConformanceCase.Expectation, Boolean> exceptions(List<Map<String, Object>> items) {
        Map<ConformanceCase.Expectation, Boolean> out = new LinkedHashMap<>();
        for (Map<String, Object> e : items) {
            out.put(new ConformanceCase.Expectation(
                            PodKey.parse(string(e, "from")),
                            PodKey.parse(string(e, "to")),
                            ((Number) e.get("port")).intValue(),
                            Protocol.parse(string(e, "protocol"))),
                    (Boolean) e.get("allowed"));
        }
        return out;
    }

    private static Map<String, Object> read(Path file) throws IOException {
        Yaml yaml = new Yaml(new SafeConstructor(new LoaderOptions()));
        try (Reader r = Files.newBufferedReader(file)) {
            Object doc = yaml.load(r);
            if (!(doc instanceof Map)) {
                throw new IllegalArgumentException(file + ": not a YAML mapping");
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> m = (Map<String, Object>) doc;
            return m;
        }
    }

    private static String string(Map<String, Object> m, String key) {
        Object v = m.get(key);
        if (v == null) {
            throw new IllegalArgumentException("missing " + key + " in " + m.keySet());
        }
        return v.toString();
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> maps(Object o) {
        return o == null ? List.of() : (List<Map<String, Object>>) o;
    }

    private static Map<String, String> stringMap(Object o) {
        Map<String, String> out = new LinkedHashMap<>();
        if (o instanceof Map<?, ?> m) {
            m.forEach((k, v) -> out.put(k.toString(), v == null ? "" : v.toString()));
        }
        return out;
    }
}
