package io.npmagent.agent.source.manifest;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Loads Namespaces, Pods, NetworkPolicies and ClusterNetworkPolicies from YAML or JSON manifests: the manifest-directory source
 * and the CLI read the cluster through this.
 *
 * <p>Each document is one object of kind Namespace ({@code v1}), Pod ({@code v1}) or NetworkPolicy
 * ({@code networking.k8s.io/v1}), or a {@code v1 List} of them. It is decoded into the client-java type
 * (strictly: an unknown field is an error, as with {@code kubectl --validate=strict}) and converted by
 * {@code KubeObjects}, so a manifest and the API server give the same model. A Pod or NetworkPolicy
 * without {@code metadata.namespace} is in {@code default}, as {@code kubectl apply} would put it.
 *
 * <p>Problems never stop the load: each becomes one line in {@link ParsedManifests#errors()} naming
 * where it is ({@code shop/app.yaml document 2 (Deployment web/x): unsupported kind ...}), and every
 * other object still loads. Untrusted text is kept exactly in the model and quoted in messages.
 */
public final class Manifests {
    /** A manifest larger than this is refused unread: no real Pod or policy comes close. */
    public static final long MAX_FILE_BYTES = 8L * 1024 * 1024;

    private Manifests() {}

    /**
     * Parses a stream of documents.
     *
     * @param origin how messages name the stream, e.g. {@code shop/app.yaml}
     */
    public static ParsedManifests parse(String yaml, String origin) {
        ManifestSet set = new ManifestSet();
        set.addStream(yaml, origin);
        return set.result();
    }

    /**
     * Loads every {@code *.yaml}, {@code *.yml} and {@code *.json} file directly in {@code dir}, in order
     * of file name, as one set. Subdirectories are not read (as {@code kubectl apply -f DIR} without
     * {@code -R}), nor are names starting with "." (editor files, and the {@code ..data} links of a
     * mounted ConfigMap, whose files also appear under their own names). Files are named in messages as
     * {@code <dir name>/<file name>}.
     *
     * <p>The same object (kind, namespace, name) in two places is an error naming both; the later one
     * wins, so the result does not depend on which file an editor saved last.
     *
     * @throws IOException if {@code dir} is not a readable directory (a file that cannot be read is an
     *                     entry in {@code errors} instead)
     */
    public static ParsedManifests load(Path dir) throws IOException {
        List<Path> files = files(dir);
        String prefix = prefix(dir);
        ManifestSet set = new ManifestSet();
        for (Path file : files) {
            String origin = prefix + file.getFileName();
            String text;
            try {
                text = read(file);
            } catch (IOException e) {
                set.report(origin + ": cannot read: " + e.getMessage());
                continue;
            }
            set.addStream(text, origin);
        }
        return set.result();
    }

    /** One manifest file's objects as JSON, as {@code kubectl apply} would send them, and the documents that did not parse. */
    public record RawFile(String origin, List<com.google.gson.JsonObject> objects, List<String> problems) {}

    /**
     * Every manifest file of {@code dir} (as {@link #load} picks them) as raw objects, for a tool that sends
     * them to an API server; {@code kind: List} documents give their items.
     */
    public static List<RawFile> raw(Path dir) throws IOException {
        List<RawFile> out = new java.util.ArrayList<>();
        String prefix = prefix(dir);
        for (Path file : files(dir)) {
            String origin = prefix + file.getFileName();
            List<com.google.gson.JsonObject> objects = new java.util.ArrayList<>();
            List<String> problems = new java.util.ArrayList<>();
            try {
                for (SafeYaml.Document doc : SafeYaml.split(read(file))) {
                    try {
                        com.google.gson.JsonElement json = SafeYaml.parse(doc);
                        if (json == null) {
                            continue;
                        }
                        if (!json.isJsonObject()) {
                            problems.add(origin + " document " + doc.index() + ": not an object");
                        } else if ("List".equals(text(json.getAsJsonObject(), "kind")) && json.getAsJsonObject().has("items")) {
                            json.getAsJsonObject().getAsJsonArray("items").forEach(i -> {
                                if (i.isJsonObject()) {
                                    objects.add(i.getAsJsonObject());
                                }
                            });
                        } else {
                            objects.add(json.getAsJsonObject());
                        }
                    } catch (SafeYaml.BadYaml e) {
                        problems.add(origin + ": " + e.getMessage());
                    }
                }
            } catch (IOException e) {
                problems.add(origin + ": cannot read: " + e.getMessage());
            }
            out.add(new RawFile(origin, objects, problems));
        }
        return out;
    }

    private static String text(com.google.gson.JsonObject o, String field) {
        return o.has(field) && o.get(field).isJsonPrimitive() ? o.get(field).getAsString() : null;
    }

    /** The manifest files of {@code dir}, in name order. */
    static List<Path> files(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            throw new NotDirectoryException(dir.toString());
        }
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.filter(Manifests::isManifest)
                    .sorted(Comparator.comparing(p -> p.getFileName().toString()))
                    .collect(Collectors.toList());
        }
    }

    /** How messages name a file of {@code dir}: {@code <dir name>/}. */
    static String prefix(Path dir) {
        Path dirName = dir.toAbsolutePath().normalize().getFileName();
        return dirName == null ? "" : dirName + "/";
    }

    private static boolean isManifest(Path p) {
        String name = p.getFileName().toString();
        String lower = name.toLowerCase(Locale.ROOT);
        return !name.startsWith(".")
                && (lower.endsWith(".yaml") || lower.endsWith(".yml") || lower.endsWith(".json"))
                && Files.isRegularFile(p);
    }

    static String read(Path file) throws IOException {
        if (Files.size(file) > MAX_FILE_BYTES) {
            throw new IOException("larger than " + MAX_FILE_BYTES + " bytes");
        }
        byte[] bytes = Files.readAllBytes(file);
        try {
            String text = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes))
                    .toString();
            return text;
        } catch (CharacterCodingException e) {
            throw new IOException("not UTF-8 text", e);
        }
    }
}
