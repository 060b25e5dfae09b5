// Linux interfaces the Swift Glibc module does not export.
#include <signal.h>
#include <sys/signalfd.h>

/// signalfd(2) for `mask`, non-blocking and close-on-exec.
static inline int clinux_signalfd(const sigset_t *mask) {
    return signalfd(-1, mask, SFD_CLOEXEC | SFD_NONBLOCK);
}
