// SPDX-License-Identifier: GPL-3.0-or-later
import CSeccomp
import Glibc
import SystemPackage

/// The engine worker's seccomp filter (libseccomp): once eSpeak is loaded, the only system calls
/// that work are those synthesis needs. Every other one fails with EPERM (a refusal the worker
/// survives and reports, rather than a kill that would look like a crash): no socket, no connect,
/// no exec, no fork, no new thread, no kill of another process, no ptrace.
///
/// Allowed: reading (any descriptor), opening files **read-only** (eSpeak loads a voice's files
/// when it first says it; Landlock limits which), writing only to descriptors 0 to 3 (the channel
/// to a11yd is 0, a11yd's log 3), memory (brk, mmap, mprotect…), futexes between the worker's two
/// threads, clocks, and exiting.
enum SyscallFilter {
    /// Calls allowed whatever their arguments. Names unknown on this architecture are skipped.
    static let allowed = [
        "read", "readv", "pread64", "lseek", "close", "fstat", "newfstatat", "stat", "lstat", "statx",
        "fstatfs", "getdents64", "fcntl", "brk", "mmap", "munmap", "mremap", "mprotect", "madvise",
        "futex", "sched_yield", "nanosleep", "clock_nanosleep", "clock_gettime", "gettimeofday",
        "getpid", "gettid", "getrandom", "rt_sigprocmask", "rt_sigreturn", "rt_sigaction", "sigaltstack",
        "restart_syscall", "exit", "exit_group", "set_robust_list", "rseq", "prlimit64",
    ]

    /// Writes go to descriptors 0 (the channel), 1 (/dev/null, or a probe's report), 2 (/dev/null)
    /// and 3 (a11yd's log).
    static let writeCalls = ["write", "writev", "sendto", "sendmsg"]

    /// no_new_privs, without Landlock (a filter needs it): whether it is set.
    static func setNoNewPrivileges() -> Bool {
        a11y_seccomp_set_no_new_privs() == 0
    }

    /// Installs the filter on every thread of the process (TSYNC: eSpeak's thread already runs).
    /// Sets no_new_privs first, as a filter requires. Returns why not, if it could not.
    static func install() -> String? {
        guard let filter = seccomp_init(a11y_seccomp_action_errno(UInt16(EPERM))) else { return "seccomp_init failed" }
        defer { seccomp_release(filter) }
        let allow = a11y_seccomp_action_allow()
        guard seccomp_attr_set(filter, SCMP_FLTATR_CTL_TSYNC, 1) == 0 else { return "this libseccomp cannot filter every thread" }
        for name in allowed {
            let number = seccomp_syscall_resolve_name(name)
            guard number >= 0 else { continue }
            guard seccomp_rule_add_array(filter, allow, number, 0, nil) == 0 else { return "cannot allow \(name)" }
        }
        for name in writeCalls {
            let number = seccomp_syscall_resolve_name(name)
            guard number >= 0 else { continue }
            for descriptor in 0...3 {
                var onDescriptor = scmp_arg_cmp(arg: 0, op: SCMP_CMP_EQ, datum_a: UInt64(descriptor), datum_b: 0)
                guard seccomp_rule_add_array(filter, allow, number, 1, &onDescriptor) == 0 else { return "cannot allow \(name)" }
            }
        }
        // open and openat only without any flag that writes, creates or truncates.
        let writing = UInt64(O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND) | 0o20000000  // __O_TMPFILE (O_TMPFILE without O_DIRECTORY, which reading a folder uses)
        for (name, flagsArgument) in [("openat", UInt32(2)), ("open", UInt32(1))] {
            let number = seccomp_syscall_resolve_name(name)
            guard number >= 0 else { continue }
            var readOnly = scmp_arg_cmp(arg: flagsArgument, op: SCMP_CMP_MASKED_EQ, datum_a: writing, datum_b: 0)
            guard seccomp_rule_add_array(filter, allow, number, 1, &readOnly) == 0 else { return "cannot allow \(name)" }
        }
        // abort() signals the process itself (tgkill to its own pid), and nothing else.
        let tgkill = seccomp_syscall_resolve_name("tgkill")
        if tgkill >= 0 {
            var ownProcess = scmp_arg_cmp(arg: 0, op: SCMP_CMP_EQ, datum_a: UInt64(getpid()), datum_b: 0)
            guard seccomp_rule_add_array(filter, allow, tgkill, 1, &ownProcess) == 0 else { return "cannot allow tgkill" }
        }
        let loaded = seccomp_load(filter)
        guard loaded == 0 else { return "seccomp_load: \(Errno(rawValue: -loaded).description)" }
        return nil
    }
}
