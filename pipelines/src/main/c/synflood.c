/*
 * synflood: a flood of TCP SYNs from one pod, for the datapath pipeline's flow-verdict cost
 * (pipelines/datapath --flows).
 *
 *   synflood SOURCE DESTINATION FIRST_PORT PORTS SECONDS
 *       Sends IPv4 TCP SYNs from SOURCE to DESTINATION as fast as one core can for SECONDS, through a raw
 *       socket (the kernel adds the IP header), each from a new source port, to destination ports
 *       FIRST_PORT to FIRST_PORT + PORTS - 1 in turn: PORTS 1 is one flow a client retries, more is a
 *       scan making that many flows. Nothing is awaited: a denied SYN is dropped by policy, an allowed one
 *       would be answered by a RST from the kernel. Prints one number on stdout: SYNs sent per second.
 *
 * C, because an interpreter sends a few tens of thousands a second at best.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The Internet checksum of bytes in network order, over what is given and what sum already holds;
 * bytes, not 16-bit loads through a cast, so the compiler's aliasing rules cannot reorder the reads. */
static uint32_t sum_bytes(const uint8_t *b, size_t len, uint32_t sum) {
    for (size_t i = 0; i + 1 < len; i += 2)
        sum += (uint32_t)b[i] << 8 | b[i + 1];
    if (len & 1)
        sum += (uint32_t)b[len - 1] << 8;
    return sum;
}

static uint16_t fold(uint32_t sum) {
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: synflood SOURCE DESTINATION FIRST_PORT PORTS SECONDS\n");
        return 2;
    }
    struct in_addr src, dst;
    if (inet_pton(AF_INET, argv[1], &src) != 1 || inet_pton(AF_INET, argv[2], &dst) != 1) {
        fprintf(stderr, "synflood: SOURCE and DESTINATION are IPv4 addresses\n");
        return 2;
    }
    int first = atoi(argv[3]), ports = atoi(argv[4]);
    double seconds = atof(argv[5]);
    if (first < 1 || ports < 1 || first + ports - 1 > 65535 || seconds <= 0) {
        fprintf(stderr, "synflood: ports within 1-65535, seconds positive\n");
        return 2;
    }
    int fd = socket(AF_INET, SOCK_RAW, IPPROTO_TCP);
    if (fd < 0) {
        perror("synflood: socket");
        return 1;
    }
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_addr = dst};
    struct tcphdr syn;
    uint64_t sent = 0, refused = 0;
    uint16_t sport = 10000;
    double start = now(), end = start + seconds;
    while (1) {
        if ((sent & 1023) == 0 && now() >= end)
            break;
        memset(&syn, 0, sizeof(syn));
        syn.source = htons(sport);
        syn.dest = htons((uint16_t)(first + sent % ports));
        syn.seq = htonl((uint32_t)sent * 2654435761u);
        syn.doff = sizeof(syn) / 4;
        syn.syn = 1;
        syn.window = htons(64240);
        uint8_t pseudo[12];
        memcpy(pseudo, &src.s_addr, 4);
        memcpy(pseudo + 4, &dst.s_addr, 4);
        pseudo[8] = 0;
        pseudo[9] = IPPROTO_TCP;
        pseudo[10] = 0;
        pseudo[11] = sizeof(syn);
        uint8_t header[sizeof(syn)];
        memcpy(header, &syn, sizeof(syn));
        syn.check = htons(fold(sum_bytes(header, sizeof(header), sum_bytes(pseudo, sizeof(pseudo), 0))));
        if (sendto(fd, &syn, sizeof(syn), 0, (struct sockaddr *)&to, sizeof(to)) < 0) {
            if (errno != ENOBUFS && errno != EPERM) {
                perror("synflood: sendto");
                return 1;
            }
            refused++; /* a full queue, or dropped on the way out: try the next */
        }
        sent++;
        sport = sport == 65535 ? 10000 : sport + 1;
    }
    double elapsed = now() - start;
    printf("%.0f\n", (sent - refused) / elapsed);
    fprintf(stderr, "synflood: %llu SYNs in %.2f s, %llu refused by the sending kernel\n", (unsigned long long)sent, elapsed,
            (unsigned long long)refused);
    return 0;
}
