/**
 * Flow verdicts in the agent: the flow log fed by the backend's reports ({@link io.npmagent.agent.flows.AgentFlows}),
 * the cluster index that names their pods and finds the nearest rule ({@link io.npmagent.agent.flows.ClusterIndex}),
 * the query and JSON form every surface shares ({@link io.npmagent.agent.flows.FlowQuery},
 * {@link io.npmagent.agent.flows.FlowJson}), and the opt-in Warning Events ({@link io.npmagent.agent.flows.DeniedFlowEvents}).
 */
package io.npmagent.agent.flows;
