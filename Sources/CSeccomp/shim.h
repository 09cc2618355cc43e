/* SPDX-License-Identifier: GPL-3.0-or-later */
// libseccomp (Debian's libseccomp-dev) for the engine worker's system-call filter, and the few
// process calls Swift cannot make itself (variadic prctl, closefrom hidden behind _GNU_SOURCE).
#include <seccomp.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

// SCMP_ACT_ERRNO is a function-like macro, which Swift does not import.
static inline uint32_t a11y_seccomp_action_errno(uint16_t code) {
    return SCMP_ACT_ERRNO(code);
}

static inline uint32_t a11y_seccomp_action_allow(void) {
    return SCMP_ACT_ALLOW;
}

// The worker dies with the daemon that started it (SIGKILL when its parent thread ends).
static inline int a11y_die_with_parent(void) {
    return prctl(PR_SET_PDEATHSIG, (unsigned long)SIGKILL, 0UL, 0UL, 0UL);
}

// Whether no_new_privs is set on this process (1), not (0), or unknown (-1).
static inline int a11y_no_new_privs(void) {
    return prctl(PR_GET_NO_NEW_PRIVS, 0UL, 0UL, 0UL, 0UL);
}

// Closes every descriptor from `lowest` up (glibc 2.34's closefrom, declared only with _GNU_SOURCE).
extern void closefrom(int lowest);
static inline void a11y_close_from(int lowest) {
    closefrom(lowest);
}

static inline int a11y_seccomp_set_no_new_privs(void) {
    return prctl(PR_SET_NO_NEW_PRIVS, 1UL, 0UL, 0UL, 0UL);
}

// Names the calling thread (and, on the main thread, the process as ps and top show it): a worker
// started as /proc/self/exe would otherwise be called "exe".
static inline int a11y_set_thread_name(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
}

// A pipe whose both ends are close-on-exec from the start (pipe2, declared only with _GNU_SOURCE):
// no program another thread starts meanwhile inherits it.
extern int pipe2(int fds[2], int flags);
static inline int a11y_pipe_cloexec(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}
