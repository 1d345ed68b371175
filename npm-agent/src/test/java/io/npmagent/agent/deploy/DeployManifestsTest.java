package io.npmagent.agent.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.kubernetes.client.custom.IntOrString;
import io.kubernetes.client.custom.Quantity;
import io.kubernetes.client.openapi.models.V1ClusterRole;
import io.kubernetes.client.openapi.models.V1ClusterRoleBinding;
import io.kubernetes.client.openapi.models.V1ConfigMap;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1ContainerPort;
import io.kubernetes.client.openapi.models.V1DaemonSet;
import io.kubernetes.client.openapi.models.V1EnvVar;
import io.kubernetes.client.openapi.models.V1HTTPGetAction;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1PolicyRule;
import io.kubernetes.client.openapi.models.V1Probe;
import io.kubernetes.client.openapi.models.V1SecurityContext;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.kubernetes.client.openapi.models.RbacV1Subject;
import io.kubernetes.client.openapi.models.V1Volume;
import io.kubernetes.client.openapi.models.V1VolumeMount;
import io.npmagent.agent.config.AgentConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * The Kubernetes manifests of {@code npm-agent/deploy/} against each other and against the code: they
 * parse into typed objects; the DaemonSet runs the agent as its service account, with its configuration
 * from the ConfigMap, probes where the agent serves them, only the capabilities it needs; the ClusterRole
 * grants exactly what the agent calls; the ConfigMap is the agent's defaults, every key; the image build
 * script ({@code npm-agent/image/build}) builds what the DaemonSet runs.
 */
class DeployManifestsTest {
    /** What the agent calls: its informers list and watch (Nodes and ClusterNetworkPolicies too), and it reports problems as Events. */
    private static final Set<String> AGENT_CALLS = Set.of(
            "/pods list", "/pods watch",
            "/namespaces list", "/namespaces watch",
            "networking.k8s.io/networkpolicies list", "networking.k8s.io/networkpolicies watch",
            "/nodes list", "/nodes watch",
            "policy.networking.k8s.io/clusternetworkpolicies list", "policy.networking.k8s.io/clusternetworkpolicies watch",
            "/events create");
    /** Each capability the agent needs, and nothing else (daemonset.yaml says why each). */
    private static final Set<String> CAPABILITIES = Set.of("NET_ADMIN", "NET_RAW", "BPF", "PERFMON");

    @Test
    void everyManifestParsesIntoTypedObjectsAndNothingElseIsThere() throws Exception {
        assertThat(DeployManifests.objects(DeployManifests.RBAC)).hasExactlyElementsOfTypes(
                V1ServiceAccount.class, V1ClusterRole.class, V1ClusterRoleBinding.class);
        assertThat(DeployManifests.objects(DeployManifests.CONFIGMAP)).hasExactlyElementsOfTypes(V1ConfigMap.class);
        assertThat(DeployManifests.objects(DeployManifests.DAEMONSET)).hasExactlyElementsOfTypes(V1DaemonSet.class);
        // kubectl apply -f npm-agent/deploy/ reads every .yaml, .yml and .json file there (not below): each
        // must be one of the Kubernetes manifests, or the install fails on it.
        try (var files = Files.list(DeployManifests.dir())) {
            List<String> applied = files.filter(Files::isRegularFile).map(p -> p.getFileName().toString())
                    .filter(n -> n.endsWith(".yaml") || n.endsWith(".yml") || n.endsWith(".json")).sorted().toList();
            assertThat(applied).containsExactlyInAnyOrderElementsOf(DeployManifests.CORE_MANIFESTS);
        }
    }

    /** The checks above mean something only if the loader refuses what kubectl --validate=strict refuses. */
    @Test
    void theLoaderRefusesUnknownFieldsAndDuplicateKeys() {
        String unknownField = """
                apiVersion: v1
                kind: ConfigMap
                metadata:
                  name: x
                  namespce: kube-system
                """;
        assertThatThrownBy(() -> io.kubernetes.client.util.Yaml.loadAll(unknownField)).hasMessageContaining("namespce");
        String duplicate = """
                apiVersion: v1
                kind: ConfigMap
                metadata:
                  name: x
                  name: y
                """;
        assertThatThrownBy(() -> DeployManifests.plainDocuments(duplicate, "test")).hasMessageContaining("name");
    }

    @Test
    void theDaemonSetRunsOnEveryNodeInTheHostNetworkAsANodeCriticalPod() {
        V1DaemonSet ds = DeployManifests.daemonSet();
        assertThat(ds.getMetadata().getNamespace()).isEqualTo("kube-system");
        V1PodSpec pod = ds.getSpec().getTemplate().getSpec();
        assertThat(ds.getSpec().getSelector().getMatchLabels()).isNotEmpty();
        assertThat(ds.getSpec().getTemplate().getMetadata().getLabels()).containsAllEntriesOf(ds.getSpec().getSelector().getMatchLabels());
        assertThat(pod.getHostNetwork()).isTrue();
        assertThat(pod.getDnsPolicy()).isEqualTo("ClusterFirstWithHostNet");
        assertThat(pod.getPriorityClassName()).isEqualTo("system-node-critical");
        assertThat(pod.getHostPID()).isNotEqualTo(Boolean.TRUE);
        assertThat(pod.getHostIPC()).isNotEqualTo(Boolean.TRUE);
        assertThat(pod.getInitContainers()).isNullOrEmpty();
        // One toleration with no key and no effect tolerates every taint.
        assertThat(pod.getTolerations()).anySatisfy(t -> {
            assertThat(t.getOperator()).isEqualTo("Exists");
            assertThat(t.getKey()).isNull();
            assertThat(t.getEffect()).isNull();
        });
        assertThat(ds.getSpec().getUpdateStrategy().getType()).isEqualTo("RollingUpdate");
        assertThat(ds.getSpec().getUpdateStrategy().getRollingUpdate().getMaxUnavailable()).isEqualTo(new IntOrString(1));
        IntOrString surge = ds.getSpec().getUpdateStrategy().getRollingUpdate().getMaxSurge();
        assertThat(surge == null || surge.equals(new IntOrString(0))).as("maxSurge 0: two agents would share one node").isTrue();
        // The agent's shutdown waits up to 20 s for the batch in flight; the kubelet must wait longer.
        assertThat(pod.getTerminationGracePeriodSeconds()).isGreaterThan(20L);
    }

    @Test
    void theAgentRunsAgainstTheApiServerAsItsServiceAccountOnItsNode() {
        V1DaemonSet ds = DeployManifests.daemonSet();
        V1ServiceAccount sa = DeployManifests.serviceAccount();
        assertThat(ds.getSpec().getTemplate().getSpec().getServiceAccountName()).isEqualTo(sa.getMetadata().getName());
        assertThat(sa.getMetadata().getNamespace()).isEqualTo(ds.getMetadata().getNamespace());
        assertThat(ds.getSpec().getTemplate().getSpec().getAutomountServiceAccountToken()).isNotEqualTo(Boolean.FALSE);
        assertThat(sa.getAutomountServiceAccountToken()).isNotEqualTo(Boolean.FALSE);

        V1Container agent = DeployManifests.agentContainer();
        assertThat(agent.getCommand()).containsExactly("npm-agent");
        assertThat(agent.getArgs()).startsWith("run").doesNotContain("--manifests", "--kubeconfig", "--node");
        V1EnvVar node = agent.getEnv().stream().filter(e -> e.getName().equals("NODE_NAME")).findFirst().orElseThrow();
        assertThat(node.getValue()).isNull();
        assertThat(node.getValueFrom().getFieldRef().getFieldPath()).isEqualTo("spec.nodeName");
    }

    @Test
    void theConfigurationComesFromTheConfigMapThroughItsVolume() {
        V1DaemonSet ds = DeployManifests.daemonSet();
        V1ConfigMap cm = DeployManifests.configMap();
        V1Container agent = DeployManifests.agentContainer();
        assertThat(cm.getMetadata().getNamespace()).isEqualTo(ds.getMetadata().getNamespace());

        String configArg = argAfter(agent.getArgs(), "--config");
        V1Volume volume = volumeWith(ds, v -> v.getConfigMap() != null);
        assertThat(volume.getConfigMap().getName()).isEqualTo(cm.getMetadata().getName());
        assertThat(volume.getConfigMap().getItems()).as("keys are files under their own names").isNullOrEmpty();
        V1VolumeMount mount = mountOf(agent, volume.getName());
        assertThat(mount.getReadOnly()).isTrue();
        Path file = Path.of(configArg);
        assertThat(file.getParent()).isEqualTo(Path.of(mount.getMountPath()));
        assertThat(cm.getData()).containsOnlyKeys(file.getFileName().toString());
        assertThat(cm.getData().get(file.getFileName().toString())).isEqualTo(DeployManifests.configFile());
    }

    /** The ConfigMap carries every key the agent reads, each at its default: editing it is changing a value. */
    @Test
    void theConfigMapHoldsEveryKeyAtItsDefault() throws Exception {
        String file = DeployManifests.configFile();
        AgentConfig.Loaded loaded = AgentConfig.parse(file);
        assertThat(loaded.ignored()).as("keys the agent would ignore").isEmpty();
        // One deliberate difference: CgroupRoot is the DaemonSet's mount of the node's cgroups (an agent run by hand links
        // no cgroup unless told).
        assertThat(loaded.config().cgroupRoot()).isEqualTo(Path.of(DeployManifests.CGROUP_MOUNT));
        Map<String, Object> byKey = new java.util.LinkedHashMap<>(loaded.config().byKey());
        byKey.put("CgroupRoot", "");
        assertThat(byKey).isEqualTo(AgentConfig.DEFAULTS.byKey());

        // JSON proper (the key says .json), and no key left out: Toggles.NetPolInBackground is NPM's place
        // for NetPolInBackground; Flows.X is the Flows object's X.
        JsonObject json = JsonParser.parseString(file).getAsJsonObject();
        Set<String> keys = new TreeSet<>();
        for (Map.Entry<String, JsonElement> e : json.entrySet()) {
            if (e.getKey().equals("Toggles")) {
                e.getValue().getAsJsonObject().keySet().forEach(t -> keys.add(t.equals("NetPolInBackground") ? t : "Toggles." + t));
            } else if (e.getKey().equals("Flows")) {
                e.getValue().getAsJsonObject().keySet().forEach(t -> keys.add("Flows." + t));
            } else {
                keys.add(e.getKey());
            }
        }
        assertThat(keys).isEqualTo(new TreeSet<>(AgentConfig.DEFAULTS.byKey().keySet()));
    }

    @Test
    void probesAndTheMetricsPortAreWhereTheAgentListens() throws Exception {
        AgentConfig config = AgentConfig.parse(DeployManifests.configFile()).config();
        int port = AgentConfig.DEFAULTS.listeningPort();
        assertThat(config.listeningPort()).isEqualTo(port);
        assertThat(config.listeningAddress()).as("probes come from the kubelet, not from localhost").isEqualTo("0.0.0.0");

        V1Container agent = DeployManifests.agentContainer();
        V1ContainerPort metrics = agent.getPorts().stream().filter(p -> p.getContainerPort() == port).findFirst().orElseThrow();
        assertThat(metrics.getProtocol()).isIn(null, "TCP");
        assertThat(metrics.getHostPort()).as("hostNetwork: hostPort equals containerPort").isIn(null, port);
        assertThat(agent.getPorts()).extracting(V1ContainerPort::getContainerPort).doesNotContain(config.debugListeningPort());

        assertProbe(agent, agent.getLivenessProbe(), "/healthz", port);
        assertProbe(agent, agent.getReadinessProbe(), "/readyz", port);
        if (agent.getStartupProbe() != null) {
            assertProbe(agent, agent.getStartupProbe(), "/healthz", port);
        }
    }

    private static void assertProbe(V1Container agent, V1Probe probe, String path, int port) {
        assertThat(probe).isNotNull();
        V1HTTPGetAction get = probe.getHttpGet();
        assertThat(get.getPath()).isEqualTo(path);
        assertThat(get.getScheme()).isIn(null, "HTTP");
        assertThat(get.getHost()).isNull();
        IntOrString p = get.getPort();
        int resolved = p.isInteger() ? p.getIntValue()
                : agent.getPorts().stream().filter(cp -> p.getStrValue().equals(cp.getName())).findFirst().orElseThrow(
                        () -> new AssertionError(path + " probe: no container port named " + p.getStrValue())).getContainerPort();
        assertThat(resolved).as(path + " probe port").isEqualTo(port);
    }

    @Test
    void theAgentHasTheCapabilitiesItNeedsAndNoMore() {
        V1SecurityContext sc = DeployManifests.agentContainer().getSecurityContext();
        assertThat(sc.getPrivileged()).isNotEqualTo(Boolean.TRUE);
        assertThat(sc.getAllowPrivilegeEscalation()).isFalse();
        assertThat(sc.getReadOnlyRootFilesystem()).isTrue();
        assertThat(sc.getCapabilities().getDrop()).containsExactly("ALL");
        assertThat(sc.getCapabilities().getAdd()).doesNotHaveDuplicates().containsExactlyInAnyOrderElementsOf(CAPABILITIES);
        assertThat(sc.getSeccompProfile()).isNotNull();
        assertThat(sc.getSeccompProfile().getType()).isEqualTo("RuntimeDefault");
    }

    @Test
    void theHostPathsAreTheBpffsTheXtablesLockAndTheCgroupsAndEveryVolumeIsMounted() throws Exception {
        V1DaemonSet ds = DeployManifests.daemonSet();
        V1Container agent = DeployManifests.agentContainer();
        AgentConfig config = AgentConfig.parse(DeployManifests.configFile()).config();

        V1Volume bpffs = volumeWith(ds, v -> v.getHostPath() != null && v.getHostPath().getPath().equals("/sys/fs/bpf"));
        assertThat(bpffs.getHostPath().getType()).isIn("Directory", "DirectoryOrCreate");
        V1VolumeMount bpffsMount = mountOf(agent, bpffs.getName());
        assertThat(Path.of(bpffsMount.getMountPath())).as("BpffsPath is where the host's bpffs is").isEqualTo(config.bpffs());
        assertThat(bpffsMount.getMountPropagation()).isEqualTo("HostToContainer");
        assertThat(bpffsMount.getReadOnly()).isNotEqualTo(Boolean.TRUE);

        V1Volume lock = volumeWith(ds, v -> v.getHostPath() != null && v.getHostPath().getPath().equals("/run/xtables.lock"));
        assertThat(lock.getHostPath().getType()).isEqualTo("FileOrCreate");
        assertThat(mountOf(agent, lock.getName()).getMountPath()).isEqualTo("/run/xtables.lock");

        V1Volume cgroups = volumeWith(ds, v -> v.getHostPath() != null && v.getHostPath().getPath().equals("/sys/fs/cgroup"));
        assertThat(cgroups.getHostPath().getType()).isEqualTo("Directory");
        V1VolumeMount cgroupsMount = mountOf(agent, cgroups.getName());
        assertThat(Path.of(cgroupsMount.getMountPath())).as("CgroupRoot is where the node's cgroups are").isEqualTo(config.cgroupRoot());
        assertThat(cgroupsMount.getReadOnly()).as("linking a program needs only a descriptor of the directory").isTrue();

        List<V1Volume> volumes = ds.getSpec().getTemplate().getSpec().getVolumes();
        assertThat(volumes.stream().filter(v -> v.getHostPath() != null)).as("no other host paths").hasSize(3);
        assertThat(agent.getVolumeMounts()).extracting(V1VolumeMount::getName).doesNotHaveDuplicates()
                .containsExactlyInAnyOrderElementsOf(volumes.stream().map(V1Volume::getName).toList());
        // The root filesystem is read-only; the JVM needs a writable /tmp (jffi unpacks its stub there).
        V1VolumeMount tmp = agent.getVolumeMounts().stream().filter(m -> m.getMountPath().equals("/tmp")).findFirst().orElseThrow();
        assertThat(volumes.stream().filter(v -> v.getName().equals(tmp.getName())).findFirst().orElseThrow().getEmptyDir()).isNotNull();
    }

    @Test
    void requestsAndLimitsAreSetAndRequestsFitInLimits() {
        var resources = DeployManifests.agentContainer().getResources();
        for (String r : List.of("cpu", "memory")) {
            Quantity request = resources.getRequests().get(r);
            Quantity limit = resources.getLimits().get(r);
            assertThat(request).as(r + " request").isNotNull();
            assertThat(limit).as(r + " limit").isNotNull();
            assertThat(request.getNumber()).as(r).isLessThanOrEqualTo(limit.getNumber());
        }
        // The heap is a share of the limit (MaxRAMPercentage), so the limit decides the heap.
        String javaOptions = DeployManifests.agentContainer().getEnv().stream().filter(e -> e.getName().equals("JAVA_TOOL_OPTIONS"))
                .findFirst().orElseThrow().getValue();
        assertThat(javaOptions).contains("-XX:MaxRAMPercentage=").doesNotContain("-Xmx");
    }

    @Test
    void theClusterRoleGrantsExactlyWhatTheAgentCalls() {
        V1ClusterRole role = DeployManifests.clusterRole();
        Set<String> granted = new HashSet<>();
        for (V1PolicyRule rule : role.getRules()) {
            assertThat(rule.getResourceNames()).as("no rule limited to names").isNullOrEmpty();
            assertThat(rule.getNonResourceURLs()).isNullOrEmpty();
            for (String group : rule.getApiGroups()) {
                for (String resource : rule.getResources()) {
                    for (String verb : rule.getVerbs()) {
                        assertThat(List.of(group, resource, verb)).doesNotContain("*");
                        granted.add(group + "/" + resource + " " + verb);
                    }
                }
            }
        }
        assertThat(granted).containsExactlyInAnyOrderElementsOf(AGENT_CALLS);
        assertThat(role.getAggregationRule()).isNull();
    }

    @Test
    void theBindingGivesTheRoleToTheAgentsServiceAccountOnly() {
        V1ClusterRoleBinding binding = DeployManifests.clusterRoleBinding();
        V1ServiceAccount sa = DeployManifests.serviceAccount();
        assertThat(binding.getRoleRef().getApiGroup()).isEqualTo("rbac.authorization.k8s.io");
        assertThat(binding.getRoleRef().getKind()).isEqualTo("ClusterRole");
        assertThat(binding.getRoleRef().getName()).isEqualTo(DeployManifests.clusterRole().getMetadata().getName());
        assertThat(binding.getSubjects()).hasSize(1);
        RbacV1Subject subject = binding.getSubjects().get(0);
        assertThat(subject.getKind()).isEqualTo("ServiceAccount");
        assertThat(subject.getName()).isEqualTo(sa.getMetadata().getName());
        assertThat(subject.getNamespace()).isEqualTo(sa.getMetadata().getNamespace());
    }

    @Test
    void theImageBuildScriptBuildsWhatTheDaemonSetRuns() throws Exception {
        ImageBuild image = DeployManifests.imageBuild();
        V1Container agent = DeployManifests.agentContainer();
        Path root = DeployManifests.repositoryRoot();
        assertThat(Files.isExecutable(DeployManifests.imageBuildScript())).isTrue();
        assertThat(image.words("entrypoint")).as("entrypoint: the DaemonSet's command").isEqualTo(agent.getCommand());
        assertThat(image.words("cmd")).as("cmd: the DaemonSet's args").isEqualTo(agent.getArgs());
        assertThat(image.words("packages")).contains("iptables", "ipset", "nftables", "iproute2", "libbpf1");
        V1SecurityContext sc = agent.getSecurityContext();
        assertThat(image.word("user")).as("the agent runs as root (with the DaemonSet's capabilities only)")
                .isEqualTo(sc.getRunAsUser() + ":" + sc.getRunAsGroup());
        // The script tags the image with the version Maven builds, which is what the DaemonSet runs.
        assertThat(agent.getImage()).endsWith(":" + pomVersion(root.resolve("npm-agent/pom.xml")));

        // Every path it copies is in the checkout or made by the Maven build.
        Map<String, String> copied = new java.util.LinkedHashMap<>();
        for (String copy : image.words("copies")) {
            String[] parts = copy.split(":", -1);
            assertThat(parts).as("copies: SOURCE:DESTINATION, " + copy).hasSize(2);
            copied.put(stripSlash(parts[0]), stripSlash(parts[1]));
            assertThat(Files.exists(root.resolve(parts[0])) || madeByTheBuild(root, parts[0]))
                    .as(parts[0] + " exists or is made by the Maven build").isTrue();
        }
        assertThat(copied).containsOnlyKeys("npm-agent/bin/npm-agent", "npm-agent/target/npm-agent.jar", "npm-agent/target/lib");
        assertThat(Files.isExecutable(root.resolve("npm-agent/bin/npm-agent"))).isTrue();
        // The launcher finds the jar at ../target/npm-agent.jar and the jars at ../target/lib, and is on PATH,
        // and so is the JRE's java, which it runs.
        Path launcher = Path.of(copied.get("npm-agent/bin/npm-agent"));
        Path home = launcher.getParent().getParent();
        assertThat(launcher.getFileName().toString()).isEqualTo(agent.getCommand().get(0));
        assertThat(Path.of(copied.get("npm-agent/target/npm-agent.jar"))).isEqualTo(home.resolve("target/npm-agent.jar"));
        assertThat(Path.of(copied.get("npm-agent/target/lib"))).isEqualTo(home.resolve("target/lib"));
        assertThat(image.words("path")).contains(launcher.getParent().toString(), image.word("java_home") + "/bin");
    }

    /** The test above means something only if the reader refuses what it cannot read as bash would. */
    @Test
    void theScriptReaderReadsPlainDeclarationsOnly() {
        ImageBuild script = ImageBuild.parse("""
                #!/usr/bin/env bash
                one=(a b)  # a comment
                many=(
                  x:y   # the first
                  # between
                  z
                )
                word=w
                quoted=("a b" c)
                expanded=(run $HOME)
                twice=(a)
                twice=(b)
                  indented=(not read)
                """);
        assertThat(script.words("one")).containsExactly("a", "b");
        assertThat(script.words("many")).containsExactly("x:y", "z");
        assertThat(script.word("word")).isEqualTo("w");
        assertThatThrownBy(() -> script.words("quoted")).hasMessageContaining("not plain words");
        assertThatThrownBy(() -> script.words("expanded")).hasMessageContaining("not plain words");
        assertThatThrownBy(() -> script.words("twice")).hasMessageContaining("2 times");
        assertThatThrownBy(() -> script.words("indented")).hasMessageContaining("0 times");
        assertThatThrownBy(() -> script.word("one")).hasMessageContaining("expected one word");
    }

    /** The project's version: its own, or its parent's when it declares none. */
    private static String pomVersion(Path pomFile) throws Exception {
        Element project = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(pomFile.toFile()).getDocumentElement();
        for (String where : List.of("version", "parent")) {
            for (org.w3c.dom.Node n = project.getFirstChild(); n != null; n = n.getNextSibling()) {
                if (n instanceof Element e && e.getTagName().equals(where)) {
                    return where.equals("version") ? e.getTextContent().strip() : text(e, "version");
                }
            }
        }
        throw new AssertionError(pomFile + ": no version");
    }

    /** target/npm-agent.jar and target/lib are what npm-agent's pom makes at package time. */
    private static boolean madeByTheBuild(Path root, String source) throws Exception {
        var pom = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(root.resolve("npm-agent/pom.xml").toFile());
        List<String> made = new ArrayList<>();
        NodeList plugins = pom.getElementsByTagName("plugin");
        for (int i = 0; i < plugins.getLength(); i++) {
            Element plugin = (Element) plugins.item(i);
            String artifact = text(plugin, "artifactId");
            if ("maven-jar-plugin".equals(artifact) && text(plugin, "finalName") != null) {
                made.add("npm-agent/target/" + text(plugin, "finalName") + ".jar");
            }
            if ("maven-dependency-plugin".equals(artifact) && text(plugin, "outputDirectory") != null
                    && plugin.getTextContent().contains("copy-dependencies")) {
                made.add("npm-agent/" + text(plugin, "outputDirectory").replace("${project.build.directory}", "target"));
            }
        }
        return made.contains(stripSlash(source));
    }

    private static String text(Element e, String tag) {
        NodeList nodes = e.getElementsByTagName(tag);
        return nodes.getLength() == 0 ? null : nodes.item(0).getTextContent().strip();
    }

    private static String stripSlash(String p) {
        return p.endsWith("/") ? p.substring(0, p.length() - 1) : p;
    }

    private static String argAfter(List<String> args, String flag) {
        int i = args.indexOf(flag);
        assertThat(i).as(flag + " in " + args).isNotNegative().isLessThan(args.size() - 1);
        return args.get(i + 1);
    }

    private static V1Volume volumeWith(V1DaemonSet ds, java.util.function.Predicate<V1Volume> p) {
        List<V1Volume> found = ds.getSpec().getTemplate().getSpec().getVolumes().stream().filter(p).toList();
        assertThat(found).hasSize(1);
        return found.get(0);
    }

    private static V1VolumeMount mountOf(V1Container c, String volume) {
        List<V1VolumeMount> found = c.getVolumeMounts().stream().filter(m -> m.getName().equals(volume)).toList();
        assertThat(found).as("mounts of volume " + volume).hasSize(1);
        return found.get(0);
    }
}
