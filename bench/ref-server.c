// The reference server for `make bench`: the floor a line-per-request Unix-socket server can
// reach on this machine. One thread, one epoll loop, non-blocking sockets, like diligenced's
// one serial queue; it answers every request line with the same fixed status line (the bench
// passes the daemon's own status answer, so both servers send the same bytes) and does nothing
// else: no parsing, no clock, no database.
//
//   ref-server SOCKET_PATH RESPONSE_FILE
//
// Prints "ready" on stdout once it listens. SIGTERM/SIGINT end it.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_FDS 1024
#define BUFFER 65536

struct client {
    char in[BUFFER];
    size_t in_len;
    char *out;
    size_t out_len, out_cap;
};

static struct client *clients[MAX_FDS];
static char *response;
static size_t response_len;

static void die(const char *what) {
    perror(what);
    exit(1);
}

static void drop(int epoll_fd, int fd) {
    epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, NULL);
    close(fd);
    free(clients[fd]->out);
    free(clients[fd]);
    clients[fd] = NULL;
}

// Writes what the socket takes; returns -1 when the client is gone.
static int flush_output(int epoll_fd, int fd) {
    struct client *c = clients[fd];
    size_t done = 0;
    while (done < c->out_len) {
        ssize_t n = send(fd, c->out + done, c->out_len - done, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) break;
            return -1;
        }
        done += (size_t)n;
    }
    memmove(c->out, c->out + done, c->out_len - done);
    c->out_len -= done;
    struct epoll_event ev = {.events = EPOLLIN | (c->out_len ? EPOLLOUT : 0), .data.fd = fd};
    epoll_ctl(epoll_fd, EPOLL_CTL_MOD, fd, &ev);
    return 0;
}

static void queue_response(struct client *c) {
    if (c->out_len + response_len > c->out_cap) {
        c->out_cap = (c->out_len + response_len) * 2;
        c->out = realloc(c->out, c->out_cap);
        if (!c->out) die("realloc");
    }
    memcpy(c->out + c->out_len, response, response_len);
    c->out_len += response_len;
}

static void readable(int epoll_fd, int fd) {
    struct client *c = clients[fd];
    ssize_t n = read(fd, c->in + c->in_len, sizeof c->in - c->in_len);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (n <= 0) { drop(epoll_fd, fd); return; }
    c->in_len += (size_t)n;
    size_t start = 0;
    for (size_t i = c->in_len - (size_t)n; i < c->in_len; i++) {
        if (c->in[i] != '\n') continue;
        if (i > start) queue_response(c);
        start = i + 1;
    }
    memmove(c->in, c->in + start, c->in_len - start);
    c->in_len -= start;
    if (c->in_len == sizeof c->in) { drop(epoll_fd, fd); return; }  // overlong line
    if (flush_output(epoll_fd, fd) < 0) drop(epoll_fd, fd);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: ref-server SOCKET_PATH RESPONSE_FILE\n");
        return 2;
    }
    FILE *f = fopen(argv[2], "rb");
    if (!f) die(argv[2]);
    response = malloc(BUFFER);
    response_len = fread(response, 1, BUFFER - 1, f);
    fclose(f);
    while (response_len > 0 && (response[response_len - 1] == '\n' || response[response_len - 1] == '\r')) response_len--;
    response[response_len++] = '\n';
    signal(SIGPIPE, SIG_IGN);

    int listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (listen_fd < 0) die("socket");
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    if (strlen(argv[1]) >= sizeof address.sun_path) { fprintf(stderr, "socket path too long\n"); return 2; }
    strncpy(address.sun_path, argv[1], sizeof address.sun_path - 1);
    unlink(argv[1]);
    if (bind(listen_fd, (struct sockaddr *)&address, sizeof address) < 0) die("bind");
    if (listen(listen_fd, 128) < 0) die("listen");

    int epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = listen_fd};
    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listen_fd, &ev);
    printf("ready\n");
    fflush(stdout);

    struct epoll_event events[64];
    for (;;) {
        int n = epoll_wait(epoll_fd, events, 64, -1);
        if (n < 0) {
            if (errno == EINTR) continue;
            die("epoll_wait");
        }
        for (int i = 0; i < n; i++) {
            int fd = events[i].data.fd;
            if (fd == listen_fd) {
                int client;
                while ((client = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
                    if (client >= MAX_FDS) { close(client); continue; }
                    clients[client] = calloc(1, sizeof(struct client));
                    struct epoll_event cev = {.events = EPOLLIN, .data.fd = client};
                    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, client, &cev);
                }
                continue;
            }
            if (!clients[fd]) continue;
            if (events[i].events & EPOLLOUT) {
                if (flush_output(epoll_fd, fd) < 0) { drop(epoll_fd, fd); continue; }
            }
            if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) readable(epoll_fd, fd);
        }
    }
}
