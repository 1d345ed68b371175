package io.npmagent.pipelines.upstream;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.junit.jupiter.api.Test;

class CnpPodMutationTest {
    /** harry-potter's pod as the suite's base manifests make it (fewer servers), as the API server hands it over. */
    private static final String POD = """
            {"metadata": {"name": "harry-potter-0", "namespace": "network-policy-conformance-gryffindor"},
             "spec": {"containers": [
               {"name": "harry-potter-client", "image": "registry.k8s.io/e2e-test-images/agnhost:2.45"},
               {"name": "harry-potter-80", "image": "registry.k8s.io/e2e-test-images/agnhost:2.45",
                "command": ["/bin/bash", "-c", "/agnhost serve-hostname --tcp --http=false --port 80"],
                "ports": [{"containerPort": 80, "protocol": "TCP", "name": "web"}]},
               {"name": "harry-potter-9003", "image": "registry.k8s.io/e2e-test-images/agnhost:2.45",
                "command": ["/bin/bash", "-c", "/agnhost porter"], "env": [{"name": "SERVE_SCTP_PORT_9003", "value": "foo"}]},
               {"name": "tcp-and-sctp", "image": "registry.k8s.io/e2e-test-images/agnhost:2.45",
                "command": ["/agnhost"], "args": ["porter"],
                "env": [{"name": "SERVE_PORT_81", "value": "foo"}, {"name": "SERVE_SCTP_PORT_9005", "value": "foo"}]},
               {"name": "sctp-args", "image": "registry.k8s.io/e2e-test-images/agnhost:2.45",
                "args": ["porter"], "env": [{"name": "SERVE_SCTP_PORT_9005", "value": "foo"}, {"name": "OTHER", "value": "x"}]},
               {"name": "not-agnhost", "image": "busybox"}
             ]}}
            """;

    @Test
    void anSctpOnlyPorterPausesAnAgnhostWithoutCommandGetsUpstreamsCmdAndTheRestStays() {
        CnpPodMutation.Result r = CnpPodMutation.of(JsonParser.parseString(POD).getAsJsonObject());
        assertThat(r.patchJson().toString()).isEqualTo("["
                + "{\"op\":\"add\",\"path\":\"/spec/containers/0/args\",\"value\":[\"pause\"]},"
                + "{\"op\":\"replace\",\"path\":\"/spec/containers/2/command\",\"value\":[\"/agnhost\",\"pause\"]},"
                + "{\"op\":\"add\",\"path\":\"/spec/containers/4/command\",\"value\":[\"/agnhost\",\"pause\"]},"
                + "{\"op\":\"remove\",\"path\":\"/spec/containers/4/args\"}]");
        assertThat(r.changes()).containsExactly(
                "network-policy-conformance-gryffindor/harry-potter-0 container harry-potter-client: no command -> args [pause] (upstream's image CMD; ours has none)",
                "network-policy-conformance-gryffindor/harry-potter-0 container harry-potter-9003: /bin/bash -c /agnhost porter -> /agnhost pause"
                        + " (its only server is SCTP: SERVE_SCTP_PORT_9003)",
                "network-policy-conformance-gryffindor/harry-potter-0 container sctp-args: porter -> /agnhost pause (its only server is SCTP: SERVE_SCTP_PORT_9005)");
    }

    @Test
    void aPodWithNothingToChangeGetsNoPatch() {
        String pod = """
                {"metadata": {"namespace": "x", "generateName": "p-"}, "spec": {"hostNetwork": true, "containers": [
                  {"name": "udp", "image": "registry.k8s.io/e2e-test-images/agnhost:2.45", "command": ["/bin/bash", "-c", "/agnhost netexec --udp-port 1"]}]}}
                """;
        CnpPodMutation.Result r = CnpPodMutation.of(JsonParser.parseString(pod).getAsJsonObject());
        assertThat(r.patch()).isEmpty();
        assertThat(r.changes()).isEmpty();
    }

    @Test
    void theWebhooksAnswerCarriesTheRequestsUidAndThePatchInBase64() {
        JsonObject review = JsonParser.parseString("{\"request\": {\"uid\": \"u-1\", \"object\": " + POD + "}}").getAsJsonObject();
        CnpPodMutation.Result r = CnpPodMutation.of(review.getAsJsonObject("request").getAsJsonObject("object"));
        JsonObject answer = CnpWebhook.answer(review, r);
        assertThat(answer.get("apiVersion").getAsString()).isEqualTo("admission.k8s.io/v1");
        JsonObject response = answer.getAsJsonObject("response");
        assertThat(response.get("uid").getAsString()).isEqualTo("u-1");
        assertThat(response.get("allowed").getAsBoolean()).isTrue();
        assertThat(response.get("patchType").getAsString()).isEqualTo("JSONPatch");
        assertThat(new String(Base64.getDecoder().decode(response.get("patch").getAsString()), StandardCharsets.UTF_8)).isEqualTo(r.patchJson().toString());

        JsonObject none = CnpWebhook.answer(JsonParser.parseString("{\"request\": {\"uid\": \"u-2\"}}").getAsJsonObject(),
                new CnpPodMutation.Result(java.util.List.of(), java.util.List.of())).getAsJsonObject("response");
        assertThat(none.has("patch")).isFalse();
        assertThat(none.get("allowed").getAsBoolean()).isTrue();
    }

    @Test
    void theConfigurationIsScopedToTheSuitesNamespacesAndPodCreation() {
        JsonObject c = JsonParser.parseString(CnpWebhook.configuration("https://127.0.0.1:1/mutate", "Q0E=")).getAsJsonObject();
        JsonObject hook = c.getAsJsonArray("webhooks").get(0).getAsJsonObject();
        assertThat(hook.getAsJsonObject("clientConfig").get("url").getAsString()).isEqualTo("https://127.0.0.1:1/mutate");
        assertThat(hook.getAsJsonArray("rules").toString()).contains("\"CREATE\"", "\"pods\"").doesNotContain("UPDATE");
        assertThat(hook.getAsJsonObject("namespaceSelector").toString()).contains("network-policy-conformance-forbidden-forrest",
                "network-policy-conformance-gryffindor", "kubernetes.io/metadata.name");
        assertThat(hook.get("failurePolicy").getAsString()).isEqualTo("Fail");
    }
}
