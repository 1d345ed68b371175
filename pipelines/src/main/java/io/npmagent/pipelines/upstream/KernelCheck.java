package io.npmagent.pipelines.upstream;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Each cyclonus probe result held against what the node's kernel saw ({@link ConntrackReplies}): a probe that
 * connected must have a reply on the node in its try's window, a blocked one none. This is what tells a wrong
 * probe apart: a reply seen where policy denies means the dataplane let the request through; a probe that
 * reports a connection the kernel never answered came from the harness (the exec that ran it), not the network.
 */
final class KernelCheck {
    /** How many probe results had evidence, how many agreed with the kernel, and each that did not (bounded). */
    record Summary(int checked, int agree, int disagree, List<String> disagreements, String captureEnded) {}

    /** The log's times are to the second: a try's window ends a second after its end. */
    private static final Duration SLACK = Duration.ofSeconds(1);
    /** A try with no later timed line (the log's end) is given this long. */
    private static final Duration LAST = Duration.ofMinutes(10);
    private static final int LISTED = 50;

    private final Summary summary;
    private final Map<String, List<String>> wrongByCase;

    private KernelCheck(Summary summary, Map<String, List<String>> wrongByCase) {
        this.summary = summary;
        this.wrongByCase = wrongByCase;
    }

    /** REPLIES null: no capture, so the wrong probes are listed without the kernel's word and there is no summary. */
    static KernelCheck of(CyclonusRounds rounds, ConntrackReplies replies) {
        int checked = 0;
        int agree = 0;
        List<String> disagreements = new ArrayList<>();
        Map<String, List<String>> wrong = new LinkedHashMap<>();
        for (CyclonusRounds.Round round : rounds.rounds()) {
            for (Map.Entry<CyclonusRounds.Cell, Character> e : round.got().entrySet()) {
                CyclonusRounds.Cell cell = e.getKey();
                char got = e.getValue();
                Boolean replied = replies == null ? null : replied(rounds, replies, round, cell);
                if (replied != null && (got == '.' || got == 'X')) {
                    checked++;
                    if (replied == (got == '.')) {
                        agree++;
                    } else {
                        disagreements.add(where(round) + ": " + cell + " probe " + word(got) + ", " + evidence(replied));
                    }
                }
                Character expected = round.expected().get(cell);
                if (expected != null && expected != got && (got == '.' || got == 'X') && (expected == '.' || expected == 'X')) {
                    wrong.computeIfAbsent(round.caseName(), k -> new ArrayList<>()).add("step " + round.step() + " try " + (round.attempt() + 1)
                            + ": " + cell + " expected " + word(expected) + ", got " + word(got) + " ("
                            + (replies == null ? "the node's conntrack was not captured" : evidence(replied)) + ")");
                }
            }
        }
        int disagree = disagreements.size();
        if (disagreements.size() > LISTED) {
            disagreements = new ArrayList<>(disagreements.subList(0, LISTED));
            disagreements.add("... and " + (disagree - LISTED) + " more");
        }
        Summary summary = replies == null ? null : new Summary(checked, agree, disagree, List.copyOf(disagreements), replies.ended());
        return new KernelCheck(summary, wrong);
    }

    /**
     * Null when there is no evidence: an address the log does not list, a try with no time, or one the capture does
     * not cover (before it began, or after its last event when it ended before the run).
     */
    private static Boolean replied(CyclonusRounds rounds, ConntrackReplies replies, CyclonusRounds.Round round, CyclonusRounds.Cell cell) {
        String from = rounds.addresses().get(cell.from());
        String to = rounds.addresses().get(cell.to());
        if (from == null || to == null || round.start() == null) {
            return null;
        }
        String[] port = cell.port().split("/", 2);
        if (port.length != 2 || !port[1].chars().allMatch(Character::isDigit)) {
            return null;
        }
        Instant end = round.end() == null ? round.start().plus(LAST) : round.end().plus(SLACK);
        if (!replies.covers(round.start(), end)) {
            return null;
        }
        return replies.replied(new ConntrackReplies.Flow(port[0].toLowerCase(), from, to, Integer.parseInt(port[1])), round.start(), end);
    }

    private static String where(CyclonusRounds.Round round) {
        return round.caseName() + ", step " + round.step() + " try " + (round.attempt() + 1);
    }

    private static String word(char mark) {
        return switch (mark) {
            case '.' -> "connected";
            case 'X' -> "blocked";
            default -> "'" + mark + "'";
        };
    }

    private static String evidence(Boolean replied) {
        if (replied == null) {
            return "no evidence on the node (a pod the log lists no address for, or a try the capture does not cover)";
        }
        return replied ? "the node saw the destination reply" : "the node saw no reply";
    }

    /** The run's agreement with the kernel, or null when its conntrack was not captured. */
    Summary summary() {
        return summary;
    }

    /** Every wrong probe of CASE in every try, each with the kernel's word; empty when none. */
    List<String> wrong(String caseName) {
        return wrongByCase.getOrDefault(caseName.strip(), List.of());
    }
}
