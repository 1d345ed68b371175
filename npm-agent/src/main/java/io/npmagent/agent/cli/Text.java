package io.npmagent.agent.cli;

import io.npmagent.dataplane.model.ApiSyntax;
import io.npmagent.dataplane.model.PodKey;
import java.util.regex.Pattern;

/** Untrusted names on a terminal: plain ones as they are, anything else quoted and escaped. */
final class Text {
    private static final Pattern PLAIN = Pattern.compile("[A-Za-z0-9._-]{1,253}");

    private Text() {}

    static String name(String text) {
        return PLAIN.matcher(text).matches() ? text : ApiSyntax.quote(text);
    }

    static String pod(PodKey key) {
        return name(key.namespace()) + "/" + name(key.name());
    }
}
