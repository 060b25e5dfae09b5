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
