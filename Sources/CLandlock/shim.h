/* SPDX-License-Identifier: GPL-3.0-or-later */
// Landlock's three system calls and PR_SET_NO_NEW_PRIVS, which Swift cannot call directly: glibc has
// no wrappers for the first, and syscall(2) and prctl(2) are variadic. The structures are spelt here
// (the kernel's ABI, landlock(7)) so that no particular <linux/landlock.h> is needed.
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

// The same numbers on every architecture (they were added after the tables were unified).
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

struct a11y_landlock_path_beneath {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

// The ABI version the kernel speaks (>= 1), or -1 with errno (ENOSYS: not built in; EOPNOTSUPP: off).
static inline long a11y_landlock_abi_version(void) {
    return syscall(SYS_landlock_create_ruleset, (void *)0, (unsigned long)0, (uint32_t)1 /* LANDLOCK_CREATE_RULESET_VERSION */);
}

// A ruleset that handles the file-system rights `handled_access_fs`; its descriptor, or -1 with errno.
static inline long a11y_landlock_create_ruleset(uint64_t handled_access_fs) {
    return syscall(SYS_landlock_create_ruleset, &handled_access_fs, sizeof handled_access_fs, (uint32_t)0);
}

static inline long a11y_landlock_add_path_rule(int ruleset, uint64_t allowed_access, int parent_fd) {
    struct a11y_landlock_path_beneath rule = { allowed_access, parent_fd };
    return syscall(SYS_landlock_add_rule, ruleset, 1 /* LANDLOCK_RULE_PATH_BENEATH */, &rule, (uint32_t)0);
}

static inline long a11y_landlock_restrict_self(int ruleset) {
    return syscall(SYS_landlock_restrict_self, ruleset, (uint32_t)0);
}

// A descriptor naming `path` for a rule, without opening the file (O_PATH, hidden without _GNU_SOURCE).
static inline int a11y_open_path(const char *path) {
#ifdef O_PATH
    return open(path, O_PATH | O_CLOEXEC);
#else
    return open(path, 010000000 /* O_PATH on x86-64 and arm64 */ | O_CLOEXEC);
#endif
}

static inline int a11y_set_no_new_privs(void) {
    return prctl(PR_SET_NO_NEW_PRIVS, 1UL, 0UL, 0UL, 0UL);
}
