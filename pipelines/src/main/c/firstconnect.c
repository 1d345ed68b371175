/*
 * firstconnect: what a new pod's first connections meet, for node-e2e's identity propagation check.
 *
 *   firstconnect SECONDS INTERVAL_MS ADDRESS:PORT|[ADDRESS]:PORT...
 *
 * Run as a new pod's only container (linked statically: the pod's image holds nothing else), so its first SYN
 * leaves as soon as the pod's network is up, before or while the pod's status reaches the API server: this is
 * what a new client meets while the other nodes' agents have not yet heard of it.
 *
 * To every target at once: a first TCP connect, given FIRST_MS (900 ms, under the kernel's 1 s SYN retransmit,
 * so it is answered or not on its first SYN alone); and every INTERVAL_MS, from a new source port each time, one
 * more connect to every target not yet reached, given INTERVAL_MS, so the moment a target first admits the pod
 * is known to within INTERVAL_MS however slow the first answer is. Until every target is reached and every first
 * connect has ended, or SECONDS have passed. Each connection that completes is closed at once with SO_LINGER 0
 * (a RST, no TIME_WAIT). Prints one line per target on stdout:
 *
 *   TARGET first=connected|silent|refused|error connected_ns=NS attempts=N
 *
 * first: how the first connect ended (silent: no answer within FIRST_MS, what a policy's drop looks like);
 * connected_ns: the wall clock (CLOCK_REALTIME, which the node and the test share) when the first handshake of
 * any connect to it completed, -1 if none did; attempts: how many connects were made. Then "done". Exits 0 once
 * it has printed, 2 on bad arguments.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_TARGETS 64
#define MAX_OPEN 1024
#define FIRST_MS 900

struct target {
    const char *text;
    struct sockaddr_storage addr;
    socklen_t len;
    const char *first; /* NULL while the first connect is in flight */
    long long connected_ns;
    int attempts;
};

struct attempt {
    int fd;
    int target;
    int is_first;
    long long ends; /* CLOCK_MONOTONIC ns when it is abandoned */
};

static long long now_ns(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int usage(void) {
    fprintf(stderr, "usage: firstconnect SECONDS INTERVAL_MS ADDRESS:PORT|[ADDRESS]:PORT...\n");
    return 2;
}

/* "10.0.0.1:80" or "[fd00::1]:80" into T's address; 0 on success. */
static int parse_target(const char *text, struct target *t) {
    char host[64];
    const char *colon = strrchr(text, ':');
    if (colon == NULL || colon - text >= (long)sizeof(host)) {
        return -1;
    }
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (*end != '\0' || port <= 0 || port > 65535) {
        return -1;
    }
    size_t n = colon - text;
    if (text[0] == '[' && n >= 2 && text[n - 1] == ']') {
        memcpy(host, text + 1, n - 2);
        host[n - 2] = '\0';
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&t->addr;
        memset(a, 0, sizeof(*a));
        a->sin6_family = AF_INET6;
        a->sin6_port = htons((unsigned short)port);
        t->len = sizeof(*a);
        return inet_pton(AF_INET6, host, &a->sin6_addr) == 1 ? 0 : -1;
    }
    memcpy(host, text, n);
    host[n] = '\0';
    struct sockaddr_in *a = (struct sockaddr_in *)&t->addr;
    memset(a, 0, sizeof(*a));
    a->sin_family = AF_INET;
    a->sin_port = htons((unsigned short)port);
    t->len = sizeof(*a);
    return inet_pton(AF_INET, host, &a->sin_addr) == 1 ? 0 : -1;
}

static struct target targets[MAX_TARGETS];
static struct attempt open_attempts[MAX_OPEN];
static int open_count;

/* Ends attempt K with OUTCOME ("connected", "refused", "error", "silent"). */
static void end_attempt(int k, const char *outcome) {
    static const struct linger reset = {1, 0};
    struct attempt *a = &open_attempts[k];
    struct target *t = &targets[a->target];
    int connected = strcmp(outcome, "connected") == 0;
    if (connected && t->connected_ns < 0) {
        t->connected_ns = now_ns(CLOCK_REALTIME);
    }
    if (a->is_first) {
        t->first = outcome;
    }
    if (connected) {
        setsockopt(a->fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
    }
    close(a->fd);
    open_attempts[k] = open_attempts[--open_count];
}

/* Starts a connect to target I, given LIFE_MS. */
static void start_attempt(int i, int is_first, long life_ms) {
    struct target *t = &targets[i];
    if (open_count == MAX_OPEN) {
        return;
    }
    t->attempts++;
    int fd = socket(t->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        if (is_first) {
            t->first = "error";
        }
        return;
    }
    struct attempt *a = &open_attempts[open_count++];
    a->fd = fd;
    a->target = i;
    a->is_first = is_first;
    a->ends = now_ns(CLOCK_MONOTONIC) + life_ms * 1000000LL;
    if (connect(fd, (struct sockaddr *)&t->addr, t->len) == 0) {
        end_attempt(open_count - 1, "connected");
    } else if (errno != EINPROGRESS) {
        end_attempt(open_count - 1, errno == ECONNREFUSED ? "refused" : "error");
    }
}

int main(int argc, char **argv) {
    if (argc < 4 || argc - 3 > MAX_TARGETS) {
        return usage();
    }
    long seconds = strtol(argv[1], NULL, 10);
    long interval_ms = strtol(argv[2], NULL, 10);
    if (seconds <= 0 || interval_ms <= 0) {
        return usage();
    }
    int n = argc - 3;
    for (int i = 0; i < n; i++) {
        targets[i].text = argv[3 + i];
        targets[i].connected_ns = -1;
        if (parse_target(argv[3 + i], &targets[i]) != 0) {
            fprintf(stderr, "firstconnect: not ADDRESS:PORT: %s\n", argv[3 + i]);
            return usage();
        }
    }
    long long start = now_ns(CLOCK_MONOTONIC);
    long long deadline = start + seconds * 1000000000LL;
    for (int i = 0; i < n; i++) {
        start_attempt(i, 1, FIRST_MS);
    }
    long long next_round = start + interval_ms * 1000000LL;
    for (;;) {
        int busy = 0;
        for (int i = 0; i < n; i++) {
            busy |= targets[i].first == NULL || targets[i].connected_ns < 0;
        }
        long long now = now_ns(CLOCK_MONOTONIC);
        if (!busy || now >= deadline) {
            break;
        }
        if (now >= next_round) {
            for (int i = 0; i < n; i++) {
                if (targets[i].connected_ns < 0) {
                    start_attempt(i, 0, interval_ms);
                }
            }
            next_round = now + interval_ms * 1000000LL;
        }
        /* Abandon what has had its time. */
        for (int k = open_count - 1; k >= 0; k--) {
            if (open_attempts[k].ends <= now) {
                end_attempt(k, "silent");
            }
        }
        struct pollfd fds[MAX_OPEN];
        for (int k = 0; k < open_count; k++) {
            fds[k].fd = open_attempts[k].fd;
            fds[k].events = POLLOUT;
            fds[k].revents = 0;
        }
        long long wait_ns = next_round - now_ns(CLOCK_MONOTONIC);
        int ready = poll(fds, open_count, wait_ns > 0 ? (int)(wait_ns / 1000000) + 1 : 0);
        if (ready <= 0) {
            continue;
        }
        /* Back to front, since ending an attempt moves the last one into its place. */
        for (int k = open_count - 1; k >= 0; k--) {
            if (fds[k].revents == 0) {
                continue;
            }
            int err = 0;
            socklen_t len = sizeof(err);
            getsockopt(open_attempts[k].fd, SOL_SOCKET, SO_ERROR, &err, &len);
            end_attempt(k, err == 0 ? "connected" : err == ECONNREFUSED ? "refused" : "error");
        }
    }
    while (open_count > 0) {
        end_attempt(open_count - 1, "silent");
    }
    for (int i = 0; i < n; i++) {
        struct target *t = &targets[i];
        printf("%s first=%s connected_ns=%lld attempts=%d\n", t->text, t->first == NULL ? "silent" : t->first, t->connected_ns, t->attempts);
    }
    printf("done\n");
    return 0;
}
