package io.npmagent.bpf;

import io.npmagent.bpf.libbpf.BpfException;
import io.npmagent.bpf.libbpf.BpfMap;
import io.npmagent.bpf.libbpf.BpfObject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Pinned maps an agent of another version left with a layout other than this agent's programs declare
 * (a value that grew, a larger capacity). libbpf refuses to load over such a pin; the agent would fall
 * back to iptables while the old programs went on enforcing a state nobody updates. Instead each such
 * pin is renamed aside before the load: the old programs keep their references, so enforcement goes on
 * as it was; the new map is created in the pin's place; the first converge fills it and this agent's
 * programs replace the old ones on each interface in one request; then the set-aside pins are removed.
 * Maps whose layout did not change (conntrack, usually) are adopted as on any restart.
 */
final class PinnedMaps {
    private static final System.Logger LOG = System.getLogger(PinnedMaps.class.getName());
    static final String ASIDE = "_replaced"; // bpffs refuses names with a dot

    private PinnedMaps() {}

    /** Renames aside every pin under {@code pinDir} that {@code object}'s declaration of it does not match; returns their names. */
    static List<String> setAsideIncompatible(BpfObject object, Path pinDir) {
        List<String> aside = new ArrayList<>();
        for (BpfObject.MapSpec spec : object.mapSpecs()) {
            Path pin = pinDir.resolve(spec.name());
            if (!Files.exists(pin)) {
                continue;
            }
            String was;
            try (BpfMap pinned = BpfMap.openPinned(pin)) {
                if (spec.matches(pinned)) {
                    continue;
                }
                was = pinned.toString();
            } catch (BpfException e) {
                was = "unreadable: " + e.getMessage();
            }
            try {
                Files.move(pin, pinDir.resolve(spec.name() + ASIDE), StandardCopyOption.REPLACE_EXISTING);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot set aside the pinned map " + pin, e);
            }
            LOG.log(System.Logger.Level.WARNING, "bpf: pinned map {0} has another layout than this agent''s {1}: set aside, "
                    + "its programs keep enforcing until this agent''s replace them", was, spec);
            aside.add(spec.name());
        }
        return aside;
    }

    /** Removes the pins set aside, once no program of ours reads them any more. */
    static void removeSetAside(Path pinDir) {
        try (Stream<Path> pins = Files.list(pinDir)) {
            for (Path p : pins.filter(p -> p.getFileName().toString().endsWith(ASIDE)).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "bpf: cannot remove set-aside pins in {0}: {1}", pinDir, e.getMessage());
        }
    }
}
