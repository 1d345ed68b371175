/*
 * tcprate: new TCP connections per second, for the datapath pipeline (pipelines/datapath).
 *
 *   tcprate server PORT
 *       Listens on PORT (IPv4, every address), prints "ready" once it listens, then accepts and closes
 *       every connection until it is killed.
 *   tcprate client ADDRESS PORT SECONDS [CONCURRENCY [WARMUP_SECONDS [TIMEOUT_MS]]]
 *       Keeps CONCURRENCY non-blocking connects in flight (default 16). Each one that completes its
 *       handshake is counted and closed at once with SO_LINGER 0, so it ends in a RST and leaves no
 *       TIME_WAIT behind: ephemeral ports never run out, however long the run. A connect that has not
 *       completed after TIMEOUT_MS (default 1000) is abandoned and counted as timed out (a dropped SYN
 *       would otherwise only be retried after a second). Connections completed during the first
 *       WARMUP_SECONDS (default 0) are not counted. Prints one number on stdout: handshakes completed
 *       per second of the measured window. A breakdown goes to stderr.
 *
 * Only the first packet of each connection (the SYN) is judged by policy; the rest match conntrack.
 * That is the point: this measures the per-connection cost of policy evaluation, which throughput
 * (one long connection) hides. C, because an interpreter would be the bottleneck.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONCURRENCY 1024

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int usage(void) {
    fprintf(stderr, "usage: tcprate server PORT\n"
                    "       tcprate client ADDRESS PORT SECONDS [CONCURRENCY [WARMUP_SECONDS [TIMEOUT_MS]]]\n");
    return 2;
}

static int parse_port(const char *text) {
    char *end;
    long port = strtol(text, &end, 10);
    return *end == '\0' && port > 0 && port < 65536 ? (int)port : -1;
}

static int server(int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    int one = 1;
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_ANY)};
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0
            || bind(fd, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(fd, 4096) < 0) {
        perror("tcprate server");
        return 1;
    }
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN};
    if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
        perror("tcprate server: epoll");
        return 1;
    }
    printf("ready\n");
    fflush(stdout);
    for (;;) {
        if (epoll_wait(ep, &ev, 1, -1) < 0 && errno != EINTR) {
            perror("tcprate server: epoll_wait");
            return 1;
        }
        for (;;) {
            int c = accept4(fd, NULL, NULL, SOCK_NONBLOCK);
            if (c < 0) {
                break; /* EAGAIN: the queue is empty; anything else: the client gave up, go on */
            }
            close(c);
        }
    }
}

struct slot {
    int fd;
    double started;
};

static long established, failed, timed_out, counted;

/* Opens a new connect in the slot; a connect that fails at once is counted as failed and retried later. */
static void open_slot(int ep, struct slot *s, int index, const struct sockaddr_in *to, double t) {
    struct linger rst = {.l_onoff = 1, .l_linger = 0};
    s->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    s->started = t;
    if (s->fd < 0) {
        perror("tcprate client: socket");
        exit(1);
    }
    setsockopt(s->fd, SOL_SOCKET, SO_LINGER, &rst, sizeof rst);
    if (connect(s->fd, (const struct sockaddr *)to, sizeof *to) < 0 && errno != EINPROGRESS) {
        failed++;
        close(s->fd);
        s->fd = -1;
        return;
    }
    struct epoll_event ev = {.events = EPOLLOUT, .data.u32 = (unsigned)index};
    epoll_ctl(ep, EPOLL_CTL_ADD, s->fd, &ev);
}

static void close_slot(struct slot *s) {
    close(s->fd); /* SO_LINGER 0: a RST, no TIME_WAIT */
    s->fd = -1;
}

static int client(const char *address, int port, double seconds, int concurrency, double warmup, double timeout) {
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(port)};
    if (inet_pton(AF_INET, address, &to.sin_addr) != 1) {
        fprintf(stderr, "tcprate client: %s is not an IPv4 address\n", address);
        return 2;
    }
    static struct slot slots[MAX_CONCURRENCY];
    struct epoll_event events[MAX_CONCURRENCY];
    int ep = epoll_create1(0);
    double start = now();
    double measure_from = start + warmup;
    double end = measure_from + seconds;
    for (int i = 0; i < concurrency; i++) {
        open_slot(ep, &slots[i], i, &to, start);
    }
    for (double t = now(); t < end; t = now()) {
        int n = epoll_wait(ep, events, concurrency, 10);
        t = now();
        for (int i = 0; i < n; i++) {
            struct slot *s = &slots[events[i].data.u32];
            int error = 0;
            socklen_t len = sizeof error;
            getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &error, &len);
            if (error == 0) {
                established++;
                if (t >= measure_from && t < end) {
                    counted++;
                }
            } else {
                failed++;
            }
            close_slot(s);
        }
        for (int i = 0; i < concurrency; i++) {
            if (slots[i].fd >= 0 && t - slots[i].started > timeout) {
                timed_out++;
                close_slot(&slots[i]);
            }
            if (slots[i].fd < 0) {
                open_slot(ep, &slots[i], i, &to, t);
            }
        }
    }
    printf("%.1f\n", counted / seconds);
    fprintf(stderr, "tcprate: %ld handshakes counted in %.1f s (after %.1f s warm-up), %ld in all, %ld failed, %ld timed out\n",
            counted, seconds, warmup, established, failed, timed_out);
    return 0;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 3 && strcmp(argv[1], "server") == 0) {
        int port = parse_port(argv[2]);
        return port < 0 ? usage() : server(port);
    }
    if (argc >= 5 && argc <= 8 && strcmp(argv[1], "client") == 0) {
        int port = parse_port(argv[3]);
        double seconds = atof(argv[4]);
        int concurrency = argc > 5 ? atoi(argv[5]) : 16;
        double warmup = argc > 6 ? atof(argv[6]) : 0;
        double timeout = (argc > 7 ? atof(argv[7]) : 1000) / 1000;
        if (port < 0 || seconds <= 0 || concurrency < 1 || concurrency > MAX_CONCURRENCY || warmup < 0 || timeout <= 0) {
            return usage();
        }
        return client(argv[2], port, seconds, concurrency, warmup, timeout);
    }
    return usage();
}
