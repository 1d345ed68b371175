/**
 * The native nftables backend: {@link io.npmagent.iptables.nft.NftBackend} renders the shared
 * {@link io.npmagent.iptables.model.NetfilterModel} into one table of its own, {@code inet npm_agent},
 * one {@code nft -f -} transaction per batch.
 *
 * <ul>
 *   <li>{@link io.npmagent.iptables.nft.NftNames}: what each object is called (hashes, never object text);</li>
 *   <li>{@link io.npmagent.iptables.nft.NftRules}: what each chain holds (pure text, hash comments);</li>
 *   <li>{@code NftElements}, {@link io.npmagent.iptables.nft.NftSetSpec}: set elements and set types, both
 *       ways, normalised through the dataplane's address types;</li>
 *   <li>{@code NftScript}: one transaction, in the one order the kernel accepts;</li>
 *   <li>{@link io.npmagent.iptables.nft.NftTable}: what the kernel holds and the plan that changes it;
 *       {@code NftListing} and {@code Json} read {@code nft -j list table} back.</li>
 * </ul>
 */
package io.npmagent.iptables.nft;
