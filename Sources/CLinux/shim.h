// Linux interfaces the Swift Glibc module does not export.
#include <signal.h>
#include <sys/signalfd.h>
#include <fcntl.h>

/// signalfd(2) for `mask`, non-blocking and close-on-exec.
static inline int clinux_signalfd(const sigset_t *mask) {
    return signalfd(-1, mask, SFD_CLOEXEC | SFD_NONBLOCK);
}

#include <sys/syscall.h>
#include <unistd.h>

/// pidfd_open(2) (glibc 2.36 has no wrapper here): a descriptor that becomes readable when the
/// process exits, so a child is reaped from a read source without SIGCHLD.
static inline int clinux_pidfd_open(pid_t pid) {
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

/// pipe2(2) with O_CLOEXEC | O_NONBLOCK: glibc declares it only under _GNU_SOURCE.
extern int pipe2(int pipefd[2], int flags);
static inline int clinux_pipe_cloexec_nonblock(int fds[2]) {
    return pipe2(fds, O_CLOEXEC | O_NONBLOCK);
}

#include <malloc.h>

/// One malloc arena for every thread. The daemon runs everything on one serial queue, but
/// libdispatch may run it on a new worker thread, and glibc gives each new thread an arena of
/// its own (fresh pages, more resident memory) for no concurrency gained.
static inline void clinux_single_malloc_arena(void) {
    mallopt(M_ARENA_MAX, 1);
}

/// Returns the arena's free memory to the system (after a large import).
static inline void clinux_malloc_trim(void) {
    malloc_trim(0);
}

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <stdint.h>
#include <errno.h>

// epoll for the control server's connection loop. struct epoll_event is
// packed on x86-64; these take and give plain tokens and readiness bits so Swift never handles it.

/// Readiness bits as Swift's `Readiness` spells them: 1 readable, 2 writable.
#define CLINUX_READABLE 1u
#define CLINUX_WRITABLE 2u

/// Adds `fd` (`add` nonzero) or changes what it waits for: input and/or room to write
/// (level-triggered); its events carry `token`.
static inline int clinux_epoll_set(int epfd, int fd, uint64_t token, int add, uint32_t interest) {
    struct epoll_event event = {
        .events = ((interest & CLINUX_READABLE) ? EPOLLIN : 0) | ((interest & CLINUX_WRITABLE) ? EPOLLOUT : 0),
        .data = { .u64 = token },
    };
    return epoll_ctl(epfd, add ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &event);
}

static inline int clinux_epoll_remove(int epfd, int fd) {
    return epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
}

/// Waits (without a timeout) until some descriptors are ready; writes their tokens and
/// readiness (a hang-up or an error is both: the next read or write tells which).
static inline int clinux_epoll_wait_events(int epfd, uint64_t *tokens, uint32_t *ready, int max) {
    struct epoll_event events[64];
    if (max > 64) max = 64;
    int n = epoll_wait(epfd, events, max, -1);
    for (int i = 0; i < n; i++) {
        uint32_t e = events[i].events;
        int broken = (e & (EPOLLHUP | EPOLLERR)) != 0;
        tokens[i] = events[i].data.u64;
        ready[i] = (((e & EPOLLIN) || broken) ? CLINUX_READABLE : 0) | (((e & EPOLLOUT) || broken) ? CLINUX_WRITABLE : 0);
    }
    return n;
}

#include <sys/socket.h>

/// accept4(2) with SOCK_CLOEXEC | SOCK_NONBLOCK (declared by glibc only under _GNU_SOURCE).
extern int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);
static inline int clinux_accept_cloexec_nonblock(int fd) {
    return accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
}

#include <sys/prctl.h>

/// Names the calling thread (top -H, gdb, /proc/<pid>/task/<tid>/comm); at most 15 bytes.
static inline void clinux_name_thread(const char *name) {
    prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}

#include <sys/timerfd.h>

/// Arms `fd`, a CLOCK_REALTIME timerfd, at 9999-12-31 with TFD_TIMER_CANCEL_ON_SET: it never
/// expires, but the kernel cancels it (it turns readable, read(2) fails with ECANCELED) when the
/// wall clock is set and when the machine resumes from a suspend. A cancelled timer stays
/// cancelled until it is armed again.
static inline int clinux_arm_clock_jump_timer(int fd) {
    struct itimerspec spec = { .it_value = { .tv_sec = 253402300799 } };
    return timerfd_settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &spec, NULL);
}

/// A non-blocking, close-on-exec CLOCK_REALTIME timerfd armed by clinux_arm_clock_jump_timer.
static inline int clinux_clock_jump_timer(void) {
    int fd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
    if (fd >= 0 && clinux_arm_clock_jump_timer(fd) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

#include <libintl.h>
#include <locale.h>

/// The locale the environment asks for (LANG, LC_*): gettext then picks the catalog.
static inline void clinux_use_environment_locale(void) {
    setlocale(LC_ALL, "");
}

/// Binds `domain` to the catalogs under `directory`, always handed out as UTF-8 (Swift's
/// strings are), whatever LC_CTYPE's codeset.
static inline void clinux_bind_catalog(const char *domain, const char *directory) {
    bindtextdomain(domain, directory);
    bind_textdomain_codeset(domain, "UTF-8");
    textdomain(domain);
}

/// dcgettext(3) for LC_MESSAGES: `msgid` itself when no catalog has it.
static inline const char *clinux_gettext(const char *domain, const char *msgid) {
    return dcgettext(domain, msgid, LC_MESSAGES);
}

/// dcngettext(3) for LC_MESSAGES: the catalog's plural form for `n`, else English's.
static inline const char *clinux_ngettext(const char *domain, const char *singular, const char *plural, unsigned long n) {
    return dcngettext(domain, singular, plural, n, LC_MESSAGES);
}
