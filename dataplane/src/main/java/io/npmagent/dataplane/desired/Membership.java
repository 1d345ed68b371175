package io.npmagent.dataplane.desired;

/** "Identity {@code identity} is in peer set {@code set}": one member of a selector peer set. */
public record Membership(PeerSetKey set, IdentityId identity) {}
