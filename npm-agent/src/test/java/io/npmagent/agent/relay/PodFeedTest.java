package io.npmagent.agent.relay;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.proto.Meta;
import io.kubernetes.client.proto.V1;
import io.npmagent.agent.source.k8s.PodWatchList;
import io.npmagent.agent.source.k8s.ProtoFrames;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The relay's feed as the agent reads it: a WatchList the agent's own reader takes whole, a watch that
 * resumes from a version inside the window, 410 Gone before it, a watcher cut off when it falls behind,
 * every watcher sent 410 when the relay lists the API server again, and nothing older than what a
 * watcher has already read.
 */
class PodFeedTest {
    private static V1.Pod pod(String name, long version, String app) {
        return V1.Pod.newBuilder().setMetadata(Meta.ObjectMeta.newBuilder().setNamespace("shop").setName(name)
                .setResourceVersion(Long.toString(version)).putLabels("app", app)).build();
    }

    /** The frames a subscription holds now, first then live, as "TYPE name@version". */
    private static List<String> read(PodFeed.Subscription s) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] f : s.first()) {
            out.write(f);
        }
        for (byte[] f; (f = s.next(0)) != null; ) {
            out.write(f);
        }
        List<String> events = new ArrayList<>();
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(out.toByteArray()));
        for (Meta.WatchEvent e; (e = next(in)) != null; ) {
            if (e.getType().equals("ERROR")) {
                events.add("ERROR " + ProtoFrames.object(e.getObject().getRaw(), Meta.Status.parser()).getCode());
            } else {
                ProtoFrames.Head head = ProtoFrames.head(e.getObject().getRaw());
                events.add(e.getType() + " " + head.name() + "@" + head.resourceVersion());
            }
        }
        return events;
    }

    private static Meta.WatchEvent next(DataInputStream in) throws IOException {
        if (in.available() == 0) {
            return null;
        }
        byte[] frame = new byte[in.readInt()];
        in.readFully(frame);
        return Meta.WatchEvent.parseFrom(frame);
    }

    @Test
    void aWatchListIsEveryPodThenTheBookmarkThatEndsThemAsTheAgentReadsIt() throws Exception {
        PodFeed feed = new PodFeed(100, 100);
        feed.replace(List.of(pod("a", 5, "web"), pod("b", 6, "db")), "10");
        feed.changed("ADDED", pod("c", 11, "web"));
        PodFeed.Subscription s = feed.watchList();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] f : s.first()) {
            out.write(f);
        }
        List<String> names = new ArrayList<>();
        String version = PodWatchList.initialEvents(new ByteArrayInputStream(out.toByteArray()),
                raw -> names.add(ProtoFrames.object(raw, V1.Pod.parser()).getMetadata().getName()));
        assertThat(names).containsExactlyInAnyOrder("a", "b", "c");
        assertThat(version).isEqualTo("11");

        feed.changed("MODIFIED", pod("a", 12, "db"));
        feed.changed("DELETED", pod("b", 13, "db"));
        assertThat(s.next(0)).isNotNull();
        assertThat(s.next(0)).as("then the changes, live").isNotNull();
        assertThat(feed.watchList()).as("a later WatchList no longer has b").satisfies(later -> assertThat(read(later))
                .containsExactlyInAnyOrder("ADDED a@12", "ADDED c@11", "BOOKMARK @13"));
    }

    @Test
    void aWatchResumesFromAVersionInsideTheWindowAndIsGoneBeforeIt() throws Exception {
        PodFeed feed = new PodFeed(3, 100);
        feed.replace(List.of(), "10");
        for (int v = 11; v <= 15; v++) {
            feed.changed("ADDED", pod("p" + v, v, "web"));
        }
        assertThat(read(feed.watch(13))).containsExactly("ADDED p14@14", "ADDED p15@15");
        assertThat(read(feed.watch(12))).as("the window holds the last 3: 13, 14, 15")
                .containsExactly("ADDED p13@13", "ADDED p14@14", "ADDED p15@15");
        PodFeed.Subscription old = feed.watch(11);
        assertThat(read(old)).containsExactly("ERROR 410");
        assertThat(old.ended()).isTrue();
        assertThat(feed.watchers()).as("the watches from 12 and 13 are still open, the gone one is not").isEqualTo(2);
    }

    @Test
    void aWatcherThatFallsBehindIsCutOffAfterWhatItHolds() throws Exception {
        PodFeed feed = new PodFeed(100, 2);
        feed.replace(List.of(), "10");
        PodFeed.Subscription slow = feed.watch(10);
        for (int v = 11; v <= 13; v++) {
            feed.changed("ADDED", pod("p" + v, v, "web"));
        }
        assertThat(read(slow)).as("it resumes from 12 and reads 13 from the window").containsExactly("ADDED p11@11", "ADDED p12@12");
        assertThat(slow.ended()).isTrue();
        assertThat(read(feed.watch(12))).containsExactly("ADDED p13@13");
    }

    @Test
    void aBookmarkMovesWhereAWatchResumesAndARelistSendsEveryWatcher410() throws Exception {
        PodFeed feed = new PodFeed(100, 100);
        feed.replace(List.of(pod("a", 5, "web")), "10");
        PodFeed.Subscription s = feed.watch(10);
        feed.bookmark("20");
        feed.changed("MODIFIED", pod("a", 21, "db"));
        feed.replace(List.of(pod("a", 30, "db")), "40");
        assertThat(read(s)).containsExactly("BOOKMARK @20", "MODIFIED a@21", "ERROR 410");
        assertThat(s.ended()).isTrue();
        assertThat(read(feed.watch(21))).as("what came before the relay's relist is not in the window").containsExactly("ERROR 410");
        assertThat(read(feed.watch(40))).isEmpty();
    }

    @Test
    void aRelayBehindTheAgentPassesOnOnlyWhatIsNewerThanWhatTheAgentRead() throws Exception {
        PodFeed feed = new PodFeed(100, 100);
        feed.replace(List.of(), "10");
        PodFeed.Subscription ahead = feed.watch(15); // the agent read up to 15 from another replica
        feed.changed("ADDED", pod("a", 12, "web"));
        feed.bookmark("14");
        feed.changed("MODIFIED", pod("a", 16, "db"));
        assertThat(read(ahead)).containsExactly("MODIFIED a@16");
    }
}
