// The measuring client for `make bench`: the same code times diligenced and the C reference
// server, so the ratio between them is the servers' difference alone. Plain blocking sockets,
// CLOCK_MONOTONIC, one JSON object of results on stdout.
//
//   client rtt SOCKET COUNT            COUNT status round trips on one open connection
//   client throughput SOCKET CLIENTS SECONDS
//                                      CLIENTS threads, each with its own connection, sending a
//                                      request as soon as the previous answer arrived
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static const char request[] = "{\"command\":\"status\"}\n";

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int connect_to(const char *path) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    strncpy(address.sun_path, path, sizeof address.sun_path - 1);
    if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) < 0) {
        perror(path);
        exit(1);
    }
    return fd;
}

// One request, then read until the answer's newline. The answer is one line and nothing
// else is sent unasked, so the newline is the last byte read.
static void round_trip(int fd) {
    if (send(fd, request, sizeof request - 1, MSG_NOSIGNAL) != (ssize_t)(sizeof request - 1)) {
        perror("send");
        exit(1);
    }
    char buffer[16384];
    for (;;) {
        ssize_t n = read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) { fprintf(stderr, "the server closed the connection\n"); exit(1); }
        if (buffer[n - 1] == '\n') return;
    }
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int rtt(const char *path, long count) {
    int fd = connect_to(path);
    for (int i = 0; i < 1000; i++) round_trip(fd);  // warm-up: caches, lazily built state
    double *samples = malloc(sizeof(double) * (size_t)count);
    for (long i = 0; i < count; i++) {
        double start = now();
        round_trip(fd);
        samples[i] = now() - start;
    }
    close(fd);
    double sum = 0;
    for (long i = 0; i < count; i++) sum += samples[i];
    qsort(samples, (size_t)count, sizeof(double), compare);
    printf("{\"count\":%ld,\"median_us\":%.2f,\"p99_us\":%.2f,\"mean_us\":%.2f,\"max_us\":%.2f}\n", count,
           samples[count / 2] * 1e6, samples[(long)ceil(count * 0.99) - 1] * 1e6, sum / count * 1e6,
           samples[count - 1] * 1e6);
    return 0;
}

struct worker {
    const char *path;
    double until;
    long done;
    pthread_t thread;
};

static void *work(void *arg) {
    struct worker *w = arg;
    int fd = connect_to(w->path);
    while (now() < w->until) {
        for (int i = 0; i < 64; i++) round_trip(fd);
        w->done += 64;
    }
    close(fd);
    return NULL;
}

static int throughput(const char *path, int clients, double seconds) {
    struct worker *workers = calloc((size_t)clients, sizeof *workers);
    double start = now();
    for (int i = 0; i < clients; i++) {
        workers[i] = (struct worker){.path = path, .until = start + seconds};
        pthread_create(&workers[i].thread, NULL, work, &workers[i]);
    }
    long total = 0;
    for (int i = 0; i < clients; i++) {
        pthread_join(workers[i].thread, NULL);
        total += workers[i].done;
    }
    double elapsed = now() - start;
    printf("{\"clients\":%d,\"requests\":%ld,\"seconds\":%.3f,\"per_second\":%.0f}\n", clients, total, elapsed,
           total / elapsed);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "rtt") == 0) return rtt(argv[2], atol(argv[3]));
    if (argc == 5 && strcmp(argv[1], "throughput") == 0) return throughput(argv[2], atoi(argv[3]), atof(argv[4]));
    fprintf(stderr, "usage: client rtt SOCKET COUNT | client throughput SOCKET CLIENTS SECONDS\n");
    return 2;
}
