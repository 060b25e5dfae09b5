// A suspend the end-to-end tests can cause: an LD_PRELOAD library for the real diligenced that
// moves CLOCK_REALTIME and CLOCK_BOOTTIME forward (a suspend) or CLOCK_REALTIME alone (a clock
// step) by offsets a test writes into a control file — never CLOCK_MONOTONIC, which a suspend
// does not move either. What the kernel does at a resume or a clock step follows from it:
//
//   - absolute timerfds on CLOCK_REALTIME and CLOCK_BOOTTIME (libdispatch arms DispatchWallTime
//     timers as TFD_TIMER_ABSTIME timerfds on CLOCK_REALTIME) are re-armed at their target less
//     the offset, so a wall-clock timer whose time passed during the "suspend" fires at once;
//   - a CLOCK_REALTIME timerfd armed with TFD_TIMER_CANCEL_ON_SET turns readable and its read
//     fails with ECANCELED, as the kernel does on a clock set and on every resume.
//
// Control: DILIGENCE_FAKE_CLOCK names the file, one line `<realtime ns> <boottime ns> <generation>`,
// replaced whole (rename) by the test. A thread of the library watches it with inotify, applies a
// new generation, and then writes `<file>.ack.<pid>` holding that generation: from then on the
// process reads the new clocks and its timers are re-armed. Built by the tests themselves
// (Tests/EndToEndTests/SimulatedSuspend.swift) with the system's cc.

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define NSEC 1000000000LL
#define MAX_FDS 4096

static int (*real_clock_gettime)(clockid_t, struct timespec *);
static int (*real_gettimeofday)(struct timeval *, void *);
static int (*real_timerfd_create)(int, int);
static int (*real_timerfd_settime)(int, int, const struct itimerspec *, struct itimerspec *);
static ssize_t (*real_read)(int, void *, size_t);
static int (*real_close)(int);

// The offsets, under a sequence lock: odd while the control thread writes them.
static _Atomic uint64_t offset_sequence;
static _Atomic int64_t realtime_offset;
static _Atomic int64_t boottime_offset;

// Timerfds of this process: their clock and, when armed absolute, the target the caller gave.
struct timer {
    int used, clock, flags, armed;
    struct itimerspec value;
};
static struct timer timers[MAX_FDS];
static atomic_int cancelled[MAX_FDS];
static pthread_mutex_t timers_lock = PTHREAD_MUTEX_INITIALIZER;

static void resolve(void) {
    if (real_clock_gettime) return;
    real_gettimeofday = dlsym(RTLD_NEXT, "gettimeofday");
    real_timerfd_create = dlsym(RTLD_NEXT, "timerfd_create");
    real_timerfd_settime = dlsym(RTLD_NEXT, "timerfd_settime");
    real_read = dlsym(RTLD_NEXT, "read");
    real_close = dlsym(RTLD_NEXT, "close");
    real_clock_gettime = dlsym(RTLD_NEXT, "clock_gettime");
}

static int is_realtime(clockid_t clock) {
    return clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE || clock == CLOCK_REALTIME_ALARM || clock == CLOCK_TAI;
}

static int is_boottime(clockid_t clock) { return clock == CLOCK_BOOTTIME || clock == CLOCK_BOOTTIME_ALARM; }

/// The offset of `clock` in nanoseconds (0 for CLOCK_MONOTONIC and the rest).
static int64_t offset_of(clockid_t clock) {
    if (!is_realtime(clock) && !is_boottime(clock)) return 0;
    for (;;) {
        uint64_t before = atomic_load(&offset_sequence);
        if (before & 1) continue;
        int64_t value = is_realtime(clock) ? atomic_load(&realtime_offset) : atomic_load(&boottime_offset);
        if (atomic_load(&offset_sequence) == before) return value;
    }
}

/// Adds `ns` to `ts`, seconds and nanoseconds apart (a timer armed in the year 9999 would
/// overflow nanoseconds since 1970).
static void add_ns(struct timespec *ts, int64_t ns) {
    ts->tv_sec += ns / NSEC;
    ts->tv_nsec += ns % NSEC;
    if (ts->tv_nsec >= NSEC) { ts->tv_nsec -= NSEC; ts->tv_sec += 1; }
    if (ts->tv_nsec < 0) { ts->tv_nsec += NSEC; ts->tv_sec -= 1; }
}

int clock_gettime(clockid_t clock, struct timespec *ts) {
    resolve();
    int rc = real_clock_gettime(clock, ts);
    if (rc == 0) add_ns(ts, offset_of(clock));
    return rc;
}

int gettimeofday(struct timeval *out, void *tz) {
    resolve();
    int rc = real_gettimeofday(out, tz);
    // glibc declares `out` nonnull, but callers pass NULL for the zone alone.
    struct timeval *volatile tv = out;
    if (rc == 0 && tv) {
        struct timespec ts = { tv->tv_sec, tv->tv_usec * 1000 };
        add_ns(&ts, offset_of(CLOCK_REALTIME));
        tv->tv_sec = ts.tv_sec;
        tv->tv_usec = ts.tv_nsec / 1000;
    }
    return rc;
}

time_t time(time_t *out) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (out) *out = ts.tv_sec;
    return ts.tv_sec;
}

int timerfd_create(int clock, int flags) {
    resolve();
    int fd = real_timerfd_create(clock, flags);
    if (fd >= 0 && fd < MAX_FDS) {
        pthread_mutex_lock(&timers_lock);
        timers[fd] = (struct timer){ .used = 1, .clock = clock };
        atomic_store(&cancelled[fd], 0);
        pthread_mutex_unlock(&timers_lock);
    }
    return fd;
}

/// Arms `fd` for real at the target `t` gave, less the offset now in force. Call locked.
static int arm_translated(int fd, const struct timer *t, struct itimerspec *old) {
    struct itimerspec real = t->value;
    if (t->armed && (t->flags & TFD_TIMER_ABSTIME)) {
        add_ns(&real.it_value, -offset_of(t->clock));
        // Past already (or 0, which would disarm): expire at once, as after a resume.
        if (real.it_value.tv_sec <= 0) real.it_value = (struct timespec){ 0, 1 };
    }
    return real_timerfd_settime(fd, t->flags, &real, old);
}

int timerfd_settime(int fd, int flags, const struct itimerspec *value, struct itimerspec *old) {
    resolve();
    if (fd < 0 || fd >= MAX_FDS || !value) return real_timerfd_settime(fd, flags, value, old);
    pthread_mutex_lock(&timers_lock);
    struct timer *t = &timers[fd];
    int rc;
    if (!t->used || !(is_realtime(t->clock) || is_boottime(t->clock))) {
        rc = real_timerfd_settime(fd, flags, value, old);
    } else {
        t->flags = flags;
        t->value = *value;
        t->armed = value->it_value.tv_sec != 0 || value->it_value.tv_nsec != 0;
        atomic_store(&cancelled[fd], 0);
        rc = arm_translated(fd, t, old);
    }
    pthread_mutex_unlock(&timers_lock);
    return rc;
}

ssize_t read(int fd, void *buffer, size_t count) {
    resolve();
    if (fd >= 0 && fd < MAX_FDS && atomic_load(&cancelled[fd])) {
        pthread_mutex_lock(&timers_lock);
        int was = atomic_exchange(&cancelled[fd], 0);
        if (was) {
            uint64_t expirations;
            real_read(fd, &expirations, sizeof expirations);  // the expiry that made it readable
        }
        pthread_mutex_unlock(&timers_lock);
        if (was) {
            errno = ECANCELED;
            return -1;
        }
    }
    return real_read(fd, buffer, count);
}

int close(int fd) {
    resolve();
    if (fd >= 0 && fd < MAX_FDS) {
        pthread_mutex_lock(&timers_lock);
        timers[fd].used = 0;
        atomic_store(&cancelled[fd], 0);
        pthread_mutex_unlock(&timers_lock);
    }
    return real_close(fd);
}

// MARK: the control thread

static char control_path[PATH_MAX];
static uint64_t applied_generation = UINT64_MAX;

/// Reads the control file and, for a new generation, switches the offsets, re-arms the timers
/// they move and cancels the CANCEL_ON_SET ones, then acknowledges.
static void apply_control(void) {
    int fd = open(control_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    char text[128] = { 0 };
    ssize_t n = real_read(fd, text, sizeof text - 1);
    real_close(fd);
    long long realtime, boottime;
    unsigned long long generation;
    if (n <= 0 || sscanf(text, "%lld %lld %llu", &realtime, &boottime, &generation) != 3) return;
    if (generation == applied_generation) return;

    pthread_mutex_lock(&timers_lock);
    int realtime_moved = atomic_load(&realtime_offset) != realtime;
    int boottime_moved = atomic_load(&boottime_offset) != boottime;
    atomic_fetch_add(&offset_sequence, 1);
    atomic_store(&realtime_offset, realtime);
    atomic_store(&boottime_offset, boottime);
    atomic_fetch_add(&offset_sequence, 1);
    for (int i = 0; i < MAX_FDS; i++) {
        struct timer *t = &timers[i];
        if (!t->used || !t->armed) continue;
        int moved = is_realtime(t->clock) ? realtime_moved : is_boottime(t->clock) ? boottime_moved : 0;
        if (!moved) continue;
        if (is_realtime(t->clock) && (t->flags & TFD_TIMER_CANCEL_ON_SET)) {
            // The kernel's clock_was_set() / timerfd_resume(): readable now, read gives ECANCELED.
            atomic_store(&cancelled[i], 1);
            struct itimerspec now = { .it_value = { 0, 1 } };
            real_timerfd_settime(i, TFD_TIMER_ABSTIME, &now, NULL);
        } else if (t->flags & TFD_TIMER_ABSTIME) {
            arm_translated(i, t, NULL);
        }
    }
    pthread_mutex_unlock(&timers_lock);
    applied_generation = generation;

    char ack[PATH_MAX + 64], temporary[PATH_MAX + 80];
    snprintf(ack, sizeof ack, "%s.ack.%d", control_path, (int)getpid());
    snprintf(temporary, sizeof temporary, "%s.tmp", ack);
    int out = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out < 0) return;
    dprintf(out, "%llu\n", generation);
    real_close(out);
    rename(temporary, ack);
}

static void *control_thread(void *unused) {
    (void)unused;
    char directory[PATH_MAX];
    strcpy(directory, control_path);
    char *slash = strrchr(directory, '/');
    const char *name = slash ? slash + 1 : control_path;
    if (slash) *slash = 0; else strcpy(directory, ".");
    int watch = inotify_init1(IN_CLOEXEC);
    if (watch < 0 || inotify_add_watch(watch, directory, IN_MOVED_TO | IN_CLOSE_WRITE) < 0) {
        fprintf(stderr, "fakeclock: cannot watch %s: %s\n", directory, strerror(errno));
        return NULL;
    }
    apply_control();
    char events[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    for (;;) {
        ssize_t n = real_read(watch, events, sizeof events);
        if (n <= 0) {
            if (n < 0 && errno == EINTR) continue;
            return NULL;
        }
        for (char *p = events; p < events + n;) {
            struct inotify_event *event = (struct inotify_event *)p;
            if (event->len > 0 && strcmp(event->name, name) == 0) apply_control();
            p += sizeof *event + event->len;
        }
    }
}

__attribute__((constructor)) static void start(void) {
    resolve();
    const char *path = getenv("DILIGENCE_FAKE_CLOCK");
    if (!path || !*path || strlen(path) >= sizeof control_path) return;
    strcpy(control_path, path);
    // The offsets in force before anything runs, then a thread for the changes.
    apply_control();
    pthread_t thread;
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_create(&thread, &attributes, control_thread, NULL);
    pthread_attr_destroy(&attributes);
}
