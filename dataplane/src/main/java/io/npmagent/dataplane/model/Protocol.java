package io.npmagent.dataplane.model;

/** The transport protocols a NetworkPolicy port may name. The names are case-sensitive, as in the API. */
public enum Protocol {
    TCP(6),
    UDP(17),
    SCTP(132);

    private final int ipProtocolNumber;

    Protocol(int ipProtocolNumber) {
        this.ipProtocolNumber = ipProtocolNumber;
    }

    /** The IANA protocol number (the {@code protocol} field of IPv4, {@code next header} of IPv6). */
    public int ipProtocolNumber() {
        return ipProtocolNumber;
    }

    public static Protocol parse(String text) {
        for (Protocol p : values()) {
            if (p.name().equals(text)) {
                return p;
            }
        }
        throw new IllegalArgumentException("unsupported protocol \"" + text + "\" (TCP, UDP or SCTP)");
    }
}
