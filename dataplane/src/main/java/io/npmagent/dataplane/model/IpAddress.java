package io.npmagent.dataplane.model;

/**
 * An IPv4 or IPv6 address as a value: 32 or 128 bits held in two longs.
 *
 * <p>Parsed by hand, never through {@link java.net.InetAddress}: a string that is not a literal
 * would make the JDK try DNS, and addresses come from untrusted objects. IPv4 parsing follows
 * Kubernetes' "sloppy" rule (leading zeros are decimal, as {@code netutils.ParseIPSloppy}), so
 * that everything the API server stores is accepted.
 */
public record IpAddress(boolean v6, long hi, long lo) implements Comparable<IpAddress> {

    public IpAddress {
        if (!v6 && (hi != 0 || (lo >>> 32) != 0)) {
            throw new IllegalArgumentException("IPv4 address wider than 32 bits");
        }
    }

    public static IpAddress v4(int bits) {
        return new IpAddress(false, 0, bits & 0xffffffffL);
    }

    public static IpAddress v6(long hi, long lo) {
        return new IpAddress(true, hi, lo);
    }

    /** Parses a literal; throws {@link IllegalArgumentException} naming the input when it is not one. */
    public static IpAddress parse(String text) {
        if (text == null || text.isEmpty()) {
            throw new IllegalArgumentException("empty IP address");
        }
        IpAddress parsed = text.indexOf(':') >= 0 ? parseV6(text) : parseV4(text);
        if (parsed == null) {
            throw new IllegalArgumentException(ApiSyntax.quote(text) + " is not a valid IP address");
        }
        return parsed;
    }

    public int bitLength() {
        return v6 ? 128 : 32;
    }

    /** Bit {@code i} counted from the most significant bit (0) of the address. */
    public boolean bit(int i) {
        if (v6) {
            return i < 64 ? ((hi >>> (63 - i)) & 1) == 1 : ((lo >>> (127 - i)) & 1) == 1;
        }
        return ((lo >>> (31 - i)) & 1) == 1;
    }

    /** This address with every bit from {@code prefixLength} on cleared. */
    public IpAddress masked(int prefixLength) {
        if (prefixLength < 0 || prefixLength > bitLength()) {
            throw new IllegalArgumentException("prefix length " + prefixLength + " out of range");
        }
        if (!v6) {
            long mask = prefixLength == 0 ? 0 : (0xffffffffL << (32 - prefixLength)) & 0xffffffffL;
            return new IpAddress(false, 0, lo & mask);
        }
        long hiMask = prefixLength >= 64 ? -1L : prefixLength == 0 ? 0 : -1L << (64 - prefixLength);
        long loMask = prefixLength <= 64 ? 0 : prefixLength == 128 ? -1L : -1L << (128 - prefixLength);
        return new IpAddress(true, hi & hiMask, lo & loMask);
    }

    /** Network byte order: 4 or 16 bytes. */
    public byte[] toBytes() {
        byte[] out = new byte[v6 ? 16 : 4];
        if (v6) {
            for (int i = 0; i < 8; i++) {
                out[i] = (byte) (hi >>> (56 - 8 * i));
                out[8 + i] = (byte) (lo >>> (56 - 8 * i));
            }
        } else {
            for (int i = 0; i < 4; i++) {
                out[i] = (byte) (lo >>> (24 - 8 * i));
            }
        }
        return out;
    }

    @Override
    public int compareTo(IpAddress o) {
        if (v6 != o.v6) {
            return v6 ? 1 : -1;
        }
        int c = Long.compareUnsigned(hi, o.hi);
        return c != 0 ? c : Long.compareUnsigned(lo, o.lo);
    }

    /** Dotted quad, or RFC 5952 text for IPv6 (lower case, longest zero run compressed). */
    @Override
    public String toString() {
        if (!v6) {
            return (lo >>> 24) + "." + ((lo >>> 16) & 0xff) + "." + ((lo >>> 8) & 0xff) + "." + (lo & 0xff);
        }
        int[] groups = new int[8];
        for (int i = 0; i < 4; i++) {
            groups[i] = (int) ((hi >>> (48 - 16 * i)) & 0xffff);
            groups[4 + i] = (int) ((lo >>> (48 - 16 * i)) & 0xffff);
        }
        int bestStart = -1;
        int bestLen = 1; // a single zero group is never compressed
        for (int i = 0; i < 8; ) {
            if (groups[i] != 0) {
                i++;
                continue;
            }
            int j = i;
            while (j < 8 && groups[j] == 0) {
                j++;
            }
            if (j - i > bestLen) {
                bestStart = i;
                bestLen = j - i;
            }
            i = j;
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                sb.append("::");
                i += bestLen - 1;
                continue;
            }
            if (sb.length() > 0 && sb.charAt(sb.length() - 1) != ':') {
                sb.append(':');
            }
            sb.append(Integer.toHexString(groups[i]));
        }
        return sb.toString();
    }

    private static IpAddress parseV4(String s) {
        long value = 0;
        int octets = 0;
        int i = 0;
        while (i <= s.length()) {
            int start = i;
            int octet = 0;
            while (i < s.length() && s.charAt(i) >= '0' && s.charAt(i) <= '9') {
                octet = octet * 10 + (s.charAt(i) - '0');
                if (octet > 255) { // any number of leading zeros is fine, as in ParseIPSloppy (Go 1.16 dtoi)
                    return null;
                }
                i++;
            }
            if (i == start) {
                return null;
            }
            value = (value << 8) | octet;
            octets++;
            if (i == s.length()) {
                break;
            }
            if (s.charAt(i) != '.' || octets == 4) {
                return null;
            }
            i++;
        }
        return octets == 4 ? new IpAddress(false, 0, value) : null;
    }

    private static IpAddress parseV6(String s) {
        int[] groups = new int[8];
        int count = 0;
        int gap = -1;
        int i = 0;
        int n = s.length();
        if (s.startsWith("::")) {
            gap = 0;
            i = 2;
            if (n == 2) {
                return new IpAddress(true, 0, 0);
            }
        } else if (s.startsWith(":")) {
            return null;
        }
        while (i < n) {
            if (count == 8) {
                return null;
            }
            int start = i;
            int value = 0;
            while (i < n && hexDigit(s.charAt(i)) >= 0 && i - start < 4) {
                value = value * 16 + hexDigit(s.charAt(i));
                i++;
            }
            if (i < n && s.charAt(i) == '.') {
                // Embedded IPv4 in the last 32 bits (::ffff:10.0.0.1).
                IpAddress v4 = parseV4(s.substring(start));
                if (v4 == null || count > 6) {
                    return null;
                }
                groups[count++] = (int) (v4.lo >>> 16);
                groups[count++] = (int) (v4.lo & 0xffff);
                i = n;
                break;
            }
            if (i == start) {
                return null;
            }
            groups[count++] = value;
            if (i == n) {
                break;
            }
            if (s.charAt(i) != ':') {
                return null;
            }
            i++;
            if (i < n && s.charAt(i) == ':') {
                if (gap >= 0) {
                    return null;
                }
                gap = count;
                i++;
            } else if (i == n) {
                return null; // trailing single colon
            }
        }
        if (gap < 0 && count != 8 || gap >= 0 && count == 8) {
            return null;
        }
        int[] full = new int[8];
        if (gap < 0) {
            full = groups;
        } else {
            System.arraycopy(groups, 0, full, 0, gap);
            int tail = count - gap;
            System.arraycopy(groups, gap, full, 8 - tail, tail);
        }
        long hi = 0;
        long lo = 0;
        for (int k = 0; k < 4; k++) {
            hi = (hi << 16) | full[k];
            lo = (lo << 16) | full[4 + k];
        }
        return new IpAddress(true, hi, lo);
    }

    /** ASCII only: {@link Character#digit} would also take fullwidth and other non-ASCII digits. */
    private static int hexDigit(char c) {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (c >= 'a' && c <= 'f') {
            return c - 'a' + 10;
        }
        if (c >= 'A' && c <= 'F') {
            return c - 'A' + 10;
        }
        return -1;
    }
}
