/*
 * rrprobe: request/response latency over one TCP connection, for the bandwidth pipeline
 * (pipelines/bandwidth), in the manner of sockperf ping-pong.
 *
 *   rrprobe server PORT
 *       Listens on PORT (IPv4, every address), prints "ready" once it listens, then serves each
 *       connection on a thread of its own: every SIZE-byte request it reads is answered with a
 *       RESPONSE-byte response (the client says both sizes first).
 *   rrprobe client ADDRESS PORT SECONDS [SIZE [WARMUP_SECONDS [RESPONSE [INTERVAL_US]]]]
 *       Sends a SIZE-byte request (default 32), waits for the whole RESPONSE-byte response (default
 *       SIZE), and again, for SECONDS (after WARMUP_SECONDS not counted, default 1): back to back, or
 *       with INTERVAL_US given, one request every INTERVAL_US microseconds (a service's steady trickle
 *       of requests; a late response delays the next). TCP_NODELAY, so a small request is one packet. Prints "count p50_us p90_us p99_us p999_us max_us retransmits
 *       bytes" on one line: the exchanges completed in the measured window, their latencies, the
 *       connection's TCP retransmissions over the whole run, and the request bytes of the measured
 *       exchanges (their sum over flows, divided by SECONDS, is the rate the flows achieved).
 *
 * A request is one small packet; with a shaper on the path it waits behind whatever the shaper queues
 * (a TBF queue) or passes at once (an EDT shaper that drops instead of queueing). That difference is
 * what the pipeline shows.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <pthread.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_SIZE (16 << 20)
#define MAX_SAMPLES (1 << 24)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int full(int fd, char *buf, int size, int writing)
{
    int done = 0;
    while (done < size) {
        ssize_t n = writing ? write(fd, buf + done, size - done) : read(fd, buf + done, size - done);
        if (n <= 0)
            return -1;
        done += n;
    }
    return 0;
}

/* One connection: the request and response sizes (4 bytes each), then request after request. */
static void *serve(void *arg)
{
    int c = (int)(long)arg;
    int one = 1;
    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    int size[2];
    if (full(c, (char *)size, sizeof(size), 0) == 0 && size[0] > 0 && size[0] <= MAX_SIZE && size[1] > 0 && size[1] <= MAX_SIZE) {
        char *buf = malloc(size[0] > size[1] ? size[0] : size[1]);
        if (buf) {
            memset(buf, 's', size[1]);
            while (full(c, buf, size[0], 0) == 0 && full(c, buf, size[1], 1) == 0) {
            }
            free(buf);
        }
    }
    close(c);
    return NULL;
}

static int server(int port)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_ANY)};
    if (bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 16) < 0) {
        perror("rrprobe server");
        return 1;
    }
    printf("ready\n");
    fflush(stdout);
    for (;;) {
        int c = accept(s, NULL, NULL);
        if (c < 0)
            continue;
        pthread_t t;
        if (pthread_create(&t, NULL, serve, (void *)(long)c) != 0)
            close(c);
        else
            pthread_detach(t);
    }
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int client(const char *addr, int port, double seconds, int size, double warmup, int response, double interval)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    if (inet_pton(AF_INET, addr, &a.sin_addr) != 1 || connect(s, (struct sockaddr *)&a, sizeof(a)) < 0) {
        perror("rrprobe client: connect");
        return 1;
    }
    char *buf = malloc(size > response ? size : response);
    if (!buf)
        return 1;
    memset(buf, 'r', size);
    int sizes[2] = {size, response};
    if (full(s, (char *)sizes, sizeof(sizes), 1) < 0)
        return 1;
    double *samples = malloc(sizeof(double) * MAX_SAMPLES);
    long n = 0;
    double start = now();
    double measured = start + warmup;
    double end = measured + seconds;
    for (double t = now(); t < end && n < MAX_SAMPLES; t = now()) {
        if (full(s, buf, size, 1) < 0 || full(s, buf, response, 0) < 0) {
            perror("rrprobe client: exchange");
            return 1;
        }
        double done = now();
        if (t >= measured)
            samples[n++] = (done - t) * 1e6;
        double next = t + interval;
        if (next > done) {
            struct timespec pause = {.tv_sec = (time_t)(next - done), .tv_nsec = (long)((next - done - (time_t)(next - done)) * 1e9)};
            nanosleep(&pause, NULL);
        }
    }
    struct tcp_info info = {};
    socklen_t len = sizeof(info);
    getsockopt(s, IPPROTO_TCP, TCP_INFO, &info, &len);
    if (n == 0) {
        fprintf(stderr, "rrprobe client: no exchange completed\n");
        return 1;
    }
    qsort(samples, n, sizeof(double), cmp);
    printf("%ld %.1f %.1f %.1f %.1f %.1f %u %lld\n", n, samples[n / 2], samples[(long)(n * 0.90)], samples[(long)(n * 0.99)],
           samples[(long)(n * 0.999)], samples[n - 1], info.tcpi_total_retrans, (long long)n * size);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "server") == 0)
        return server(atoi(argv[2]));
    if (argc >= 5 && strcmp(argv[1], "client") == 0) {
        int size = argc > 5 ? atoi(argv[5]) : 32;
        if (size < 1 || size > MAX_SIZE)
            size = 32;
        int response = argc > 7 ? atoi(argv[7]) : size;
        if (response < 1 || response > MAX_SIZE)
            response = size;
        double interval = argc > 8 ? atof(argv[8]) / 1e6 : 0;
        return client(argv[2], atoi(argv[3]), atof(argv[4]), size, argc > 6 ? atof(argv[6]) : 1.0, response, interval);
    }
    fprintf(stderr, "usage: rrprobe server PORT | rrprobe client ADDRESS PORT SECONDS [SIZE [WARMUP_SECONDS [RESPONSE [INTERVAL_US]]]]\n");
    return 2;
}
