package io.npmagent.pipelines.upstream;

import io.npmagent.pipelines.upstream.SuiteRun.Outcome;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;
import org.xml.sax.SAXException;

/**
 * Counts one JUnit report. e2e.test's lists every spec of the binary (thousands, those outside the
 * focus as skipped with the bare message "skipped"), so only the specs {@code ours} accepts count as
 * passed, and of those not run only the ones {@code skips} gives a reason for (the run's skip
 * pattern, or a spec that skipped itself at run time: its message says why); a spec the short form did
 * not select is not counted. A failure counts whatever its name: a failed suite setup
 * ("[SynchronizedBeforeSuite]") fails every spec.
 */
final class JUnitReport {
    private JUnitReport() {}

    static SuiteRun read(Path file, String suite, String backend, long seconds, Predicate<String> ours, Reason skips, Reason failures)
            throws IOException {
        Element root;
        try {
            DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
            factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
            root = factory.newDocumentBuilder().parse(file.toFile()).getDocumentElement();
        } catch (ParserConfigurationException | SAXException e) {
            throw new IOException(file + ": not a JUnit report: " + e.getMessage(), e);
        }
        int passed = 0;
        List<Outcome> failed = new ArrayList<>();
        List<Outcome> skipped = new ArrayList<>();
        NodeList cases = root.getElementsByTagName("testcase");
        for (int i = 0; i < cases.getLength(); i++) {
            Element testCase = (Element) cases.item(i);
            String name = testCase.getAttribute("name").replaceFirst("^\\[It\\] ", "");
            Element failure = first(testCase, "failure");
            if (failure == null) {
                failure = first(testCase, "error");
            }
            if (failure != null) {
                failed.add(new Outcome(name, failures.of(name, failure.getAttribute("message") + "\n" + failure.getTextContent())));
            } else if (!ours.test(name)) {
                continue;
            } else if (first(testCase, "skipped") != null) {
                String reason = skips.of(name, first(testCase, "skipped").getAttribute("message").strip());
                if (reason != null) {
                    skipped.add(new Outcome(name, reason));
                }
            } else {
                passed++;
            }
        }
        return SuiteRun.of(suite, backend, passed, seconds, failed, skipped);
    }

    private static Element first(Element parent, String tag) {
        NodeList list = parent.getElementsByTagName(tag);
        return list.getLength() == 0 ? null : (Element) list.item(0);
    }

    /** Why a spec failed or was skipped, from its name and the report's text about it; null: not counted. */
    @FunctionalInterface
    interface Reason {
        String of(String name, String reportText);
    }
}
