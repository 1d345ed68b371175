package io.npmagent.agent.source.manifest;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import io.npmagent.dataplane.model.ApiSyntax;
import java.io.StringReader;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;
import org.yaml.snakeyaml.representer.Representer;

/**
 * Untrusted YAML (or JSON, which is YAML) to a JSON tree, the shape the API server decodes objects from.
 *
 * <p><b>Why not {@code Yaml.load}.</b> Nothing is constructed from the text: SnakeYAML only
 * <em>composes</em> it into a node graph, and this class turns nodes into Gson elements itself. So no
 * tag can name a Java type (there is no constructor in the path at all), and every scalar keeps its text:
 * a quoted string is that string, whatever it contains. Tags other than the JSON-compatible core ones
 * ({@code !!str}, {@code !!int}, {@code !!float}, {@code !!bool}, {@code !!null}, {@code !!map},
 * {@code !!seq}) are refused; SnakeYAML itself already refuses global tags such as
 * {@code !!java.net.URL}. Merge keys ({@code <<: *base}) are applied while composing, as Kubernetes'
 * decoder applies them. Plain scalars are typed by {@link CoreSchemaResolver}.
 *
 * <p><b>Limits</b>, against documents built to exhaust memory or stack: at most {@value #MAX_CODE_POINTS}
 * code points per document, nesting depth {@value #MAX_DEPTH}, 50 aliases to collections (SnakeYAML's
 * default, which stops "billion laughs"), {@value #MAX_NODES} nodes after aliases are expanded, and no
 * alias that contains itself. Duplicate keys in a mapping are an error, as in kubectl.
 *
 * <p><b>Documents</b> are split as kubectl splits them (apimachinery's YAMLReader): at lines that start
 * with {@code ---} followed by nothing but blanks or a comment. Each is parsed on its own, so a syntax
 * error in one does not lose the others.
 */
public final class SafeYaml {
    static final int MAX_CODE_POINTS = 4 * 1024 * 1024;
    static final int MAX_DEPTH = 64;
    static final int MAX_NODES = 200_000;

    private SafeYaml() {}

    /**
     * One document of a stream.
     *
     * @param index     1-based position in the stream, counting documents that have at least one line
     * @param firstLine 1-based line of the stream on which the document's text starts
     */
    record Document(int index, int firstLine, String text) {}

    /** A document that is not acceptable YAML; the message names the line in the stream. */
    public static final class BadYaml extends Exception {
        private static final long serialVersionUID = 1L;

        BadYaml(String message) {
            super(message);
        }
    }

    static List<Document> split(String stream) {
        List<Document> docs = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        int currentFirstLine = 1;
        int line = 0;
        int pos = 0;
        while (pos < stream.length()) {
            int nl = stream.indexOf('\n', pos);
            int end = nl < 0 ? stream.length() : nl + 1;
            String text = stream.substring(pos, end);
            line++;
            pos = end;
            if (isSeparator(text)) {
                if (current.length() > 0) {
                    docs.add(new Document(docs.size() + 1, currentFirstLine, current.toString()));
                    current.setLength(0);
                }
                currentFirstLine = line + 1;
            } else {
                current.append(text);
            }
        }
        if (current.length() > 0) {
            docs.add(new Document(docs.size() + 1, currentFirstLine, current.toString()));
        }
        return docs;
    }

    private static boolean isSeparator(String line) {
        if (!line.startsWith("---")) {
            return false;
        }
        String rest = line.substring(3).strip();
        return rest.isEmpty() || rest.startsWith("#");
    }

    /** A single YAML or JSON document (a config file) as JSON, or null when it holds no value. */
    public static JsonElement parseText(String text) throws BadYaml {
        return parse(new Document(1, 1, text));
    }

    /** The document as JSON, or null when it holds no value (only blanks or comments). */
    static JsonElement parse(Document doc) throws BadYaml {
        LoaderOptions options = new LoaderOptions();
        options.setCodePointLimit(MAX_CODE_POINTS);
        options.setNestingDepthLimit(MAX_DEPTH);
        options.setMaxAliasesForCollections(50);
        options.setAllowRecursiveKeys(false);
        options.setAllowDuplicateKeys(false);
        options.setMergeOnCompose(true);
        DumperOptions dumper = new DumperOptions();
        // The constructor is never used (compose only); SafeConstructor is passed so that nothing else could be.
        Yaml yaml = new Yaml(
                new SafeConstructor(options), new Representer(dumper), dumper, options, new CoreSchemaResolver());
        Node root;
        try {
            root = yaml.compose(new StringReader(doc.text()));
        } catch (MarkedYAMLException e) {
            throw new BadYaml("invalid YAML: " + clean(e.getProblem()) + at(doc, e.getProblemMark()));
        } catch (YAMLException e) {
            throw new BadYaml("invalid YAML: " + clean(e.getMessage()));
        }
        if (root == null) {
            return null;
        }
        return new Converter(doc).convert(root, 0);
    }

    private static String at(Document doc, Mark mark) {
        return mark == null ? "" : " (line " + (doc.firstLine() + mark.getLine()) + ", column " + (mark.getColumn() + 1) + ")";
    }

    /** SnakeYAML problems can quote the input: keep them on one line. */
    private static String clean(String text) {
        if (text == null) {
            return "unknown problem";
        }
        String oneLine = text.codePoints()
                .map(c -> Character.isISOControl(c) || c == 0x2028 || c == 0x2029 ? '?' : c)
                .collect(StringBuilder::new, StringBuilder::appendCodePoint, StringBuilder::append)
                .toString();
        return oneLine.length() > 200 ? oneLine.substring(0, 200) + "..." : oneLine;
    }

    private static final class Converter {
        private final Document doc;
        private final Set<Node> open = Collections.newSetFromMap(new IdentityHashMap<>());
        private int nodes;

        Converter(Document doc) {
            this.doc = doc;
        }

        JsonElement convert(Node node, int depth) throws BadYaml {
            if (++nodes > MAX_NODES) {
                throw new BadYaml("document too large: more than " + MAX_NODES + " values after expanding aliases");
            }
            if (depth > MAX_DEPTH) {
                throw new BadYaml("nested deeper than " + MAX_DEPTH + " levels" + at(doc, node.getStartMark()));
            }
            if (node instanceof ScalarNode s) {
                return scalar(s);
            }
            if (!open.add(node)) {
                throw new BadYaml("an alias refers to a collection that contains it" + at(doc, node.getStartMark()));
            }
            try {
                if (node instanceof MappingNode m) {
                    return mapping(m, depth);
                }
                if (node instanceof SequenceNode s) {
                    requireTag(s, Tag.SEQ);
                    JsonArray array = new JsonArray();
                    for (Node item : s.getValue()) {
                        array.add(convert(item, depth + 1));
                    }
                    return array;
                }
                throw new BadYaml("unsupported YAML node" + at(doc, node.getStartMark()));
            } finally {
                open.remove(node);
            }
        }

        private JsonObject mapping(MappingNode m, int depth) throws BadYaml {
            requireTag(m, Tag.MAP);
            JsonObject object = new JsonObject();
            for (NodeTuple t : m.getValue()) {
                Node k = t.getKeyNode();
                if (k.getTag().equals(Tag.MERGE)) { // left over only when the merge could not be applied
                    throw new BadYaml("a merge key (<<) must name a mapping or a list of mappings"
                            + at(doc, k.getStartMark()));
                }
                if (!(k instanceof ScalarNode key)) {
                    throw new BadYaml("a mapping key must be a scalar" + at(doc, k.getStartMark()));
                }
                scalar(key); // rejects keys with unsupported tags
                if (object.has(key.getValue())) {
                    throw new BadYaml("duplicate key " + ApiSyntax.quote(key.getValue())
                            + at(doc, k.getStartMark()));
                }
                object.add(key.getValue(), convert(t.getValueNode(), depth + 1));
            }
            return object;
        }

        private JsonElement scalar(ScalarNode s) throws BadYaml {
            Tag tag = s.getTag();
            String text = s.getValue();
            try {
                if (tag.equals(Tag.STR)) {
                    return new JsonPrimitive(text);
                }
                if (tag.equals(Tag.NULL)) {
                    return JsonNull.INSTANCE;
                }
                if (tag.equals(Tag.BOOL) && (text.equals("true") || text.equals("false"))) {
                    return new JsonPrimitive(Boolean.parseBoolean(text));
                }
                if (tag.equals(Tag.INT)) {
                    return new JsonPrimitive(LiteralNumber.ofInt(text));
                }
                if (tag.equals(Tag.FLOAT)) {
                    return new JsonPrimitive(LiteralNumber.ofFloat(text));
                }
            } catch (NumberFormatException e) {
                throw new BadYaml("not a number: " + ApiSyntax.quote(text)
                        + at(doc, s.getStartMark()));
            }
            throw new BadYaml("unsupported YAML tag " + ApiSyntax.quote(tag.getValue())
                    + " for " + ApiSyntax.quote(text) + at(doc, s.getStartMark()));
        }

        private void requireTag(Node node, Tag expected) throws BadYaml {
            if (!node.getTag().equals(expected)) {
                throw new BadYaml("unsupported YAML tag " + ApiSyntax.quote(node.getTag().getValue())
                        + at(doc, node.getStartMark()));
            }
        }
    }
}
