package io.npmagent.agent.source.manifest;

import java.util.regex.Pattern;
import org.yaml.snakeyaml.nodes.Tag;
import org.yaml.snakeyaml.resolver.Resolver;

/**
 * Decides the type of plain (unquoted) scalars: a narrow YAML 1.2 core schema instead of SnakeYAML's
 * YAML 1.1 rules. Under 1.1, {@code yes}, {@code on}, {@code 2024-01-01} and {@code 1:30} are booleans,
 * timestamps and sexagesimal numbers, so a label such as {@code enabled: on} would silently turn into
 * {@code "true"}. Here only {@code true}/{@code false} are booleans, {@code null}, {@code ~} and nothing
 * are null, numbers look like numbers, and {@code <<} is a merge key; everything else is a string,
 * as written.
 */
final class CoreSchemaResolver extends Resolver {
    private static final Pattern BOOL = Pattern.compile("^(?:true|false)$");
    private static final Pattern INT = Pattern.compile("^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$");
    private static final Pattern FLOAT =
            Pattern.compile("^[-+]?(?:\\.[0-9]+|[0-9]+(?:\\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$");
    private static final Pattern NULL = Pattern.compile("^(?:~|null|)$");

    @Override
    protected void addImplicitResolvers() {
        // Order matters within one first character: INT before FLOAT, so "80" is an int.
        addImplicitResolver(Tag.BOOL, BOOL, "tf");
        addImplicitResolver(Tag.INT, INT, "-+0123456789");
        addImplicitResolver(Tag.FLOAT, FLOAT, "-+0123456789.");
        addImplicitResolver(Tag.NULL, NULL, "~n\0"); // '\0' is how Resolver files the empty scalar
        // "<<" is YAML 1.1's merge key. Kubernetes' decoder (go-yaml) honours it, so manifests use it.
        addImplicitResolver(Tag.MERGE, Resolver.MERGE, "<");
    }
}
