// SPDX-License-Identifier: GPL-3.0-or-later
import A11ySystem
import CSeccomp
import Glibc
import SystemPackage

/// The Piper worker's sandbox (docs/voices.md, "How the Piper worker is shut in"): what
/// `a11yd --engine-worker --exec PROGRAM --read PATH… -- ARGUMENTS` does before it becomes PROGRAM.
/// The eSpeak worker shuts itself in once eSpeak is loaded; a Python worker cannot, so a11yd's own
/// binary shuts the process in first and then executes Python inside, which keeps all of it:
/// 1. `no_new_privs`, and death with a11yd (`PR_SET_PDEATHSIG` survives exec);
/// 2. Landlock: it reads only the Python runtime, the voices and the few system files a Python
///    process reads; it writes nothing; it executes only that Python;
/// 3. a seccomp filter of what a speech engine has no use for, whatever Python does: no network
///    socket (it speaks only on the socket a11yd gave it), no new process (threads only), no
///    ptrace, no mount, no kernel modules. What the filter refuses fails with EPERM.
public enum SandboxedLauncher {
    /// What the process is shut in with, for the worker's `ready` (the worker adds its own words).
    public static let protectionVariable = "A11YD_WORKER_PROTECTION"

    public static func run(program: String, arguments: [String], readable: [String]) -> Never {
        // Nothing a11yd had open is the worker's: the channel is 0, stdout 1, and 2 the pipe a11yd
        // reads into its log (`WorkerStderrReader`).
        a11y_close_from(3)
        _ = a11y_die_with_parent()
        var summary: [String] = []
        let noNewPrivileges = SyscallFilter.setNoNewPrivileges()
        let executed = realPath(FilePath(program))?.string ?? program
        switch Landlock.restrictThisThread(to: rules(executing: executed, reading: readable)) {
        case .restricted(let abi): summary.append("landlock (ABI \(abi), reads only the Python runtime and the voices, writes nothing)")
        case .unavailable(let why): summary.append("no landlock (\(why))")
        }
        if let refused = ProcessFilter.install() {
            summary.append("no seccomp (\(refused))")
        } else {
            summary.append("seccomp (no network, no new process)")
        }
        summary.append(noNewPrivileges ? "no_new_privs" : "new privileges possible")
        setenv(protectionVariable, summary.joined(separator: ", "), 1)
        var argv: [UnsafeMutablePointer<CChar>?] = ([program] + arguments).map { strdup($0) } + [nil]
        execv(program, &argv)
        let why = SystemCall.lastError.description
        let line = "a11yd engine worker: cannot execute \(program): \(why)\n"
        _ = line.withCString { write(2, $0, strlen($0)) }
        exit(127)
    }

    /// Read-only: `readable` (the venv, the script's folder, the voice folders), the interpreter's
    /// own prefix (its standard library: `/usr` for Debian's, a pyenv version folder for another),
    /// the shared libraries, and what CPython and onnxruntime read at start (the loader's cache,
    /// the time zone, /proc and /sys's CPU facts, /dev/urandom). Execute: the interpreter alone.
    static func rules(executing executed: String, reading readable: [String]) -> [Landlock.Rule] {
        // The interpreter is PREFIX/bin/python3 (`executed` is absolute: realpath resolved it, or
        // nothing can be executed anyway).
        let prefix = FilePath(executed).removingLastComponent().removingLastComponent().string
        var paths = readable + [prefix, "/usr/lib", "/usr/share/zoneinfo", "/lib", "/lib64", "/etc/ld.so.cache",
            "/etc/localtime", "/proc", "/sys/devices/system/cpu", "/dev/urandom", "/dev/null"]
        var seen = Set<String>()
        paths = paths.filter { access($0, F_OK) == 0 && seen.insert($0).inserted }
        // The interpreter is executed through the dynamic loader (the one a11yd runs with: both are
        // the system's programs).
        let executable = [executed] + (DynamicLoader.path.map { [$0] } ?? [])
        return paths.map { Landlock.Rule($0, .read) } + executable.map { Landlock.Rule($0, [.execute, .readFile]) }
    }

    static func realPath(_ path: FilePath) -> FilePath? {
        guard let resolved = path.withPlatformString({ realpath($0, nil) }) else { return nil }
        defer { free(resolved) }
        return FilePath(platformString: resolved)
    }
}

/// The launcher's seccomp filter: everything is allowed but what it names (a Python runtime makes
/// too many different calls for a list of allowed ones to be kept honestly). Installed before exec
/// (which it must allow once; Landlock then allows only the interpreter).
enum ProcessFilter {
    /// Refused whatever their arguments. io_uring too: its requests make and connect sockets
    /// (IORING_OP_SOCKET, IORING_OP_CONNECT) without the system calls refused here.
    static let refused = [
        "socketpair", "bind", "listen", "accept", "accept4", "connect", "fork", "vfork", "ptrace",
        "io_uring_setup", "io_uring_enter", "io_uring_register",
        "process_vm_readv", "process_vm_writev", "mount", "umount2", "pivot_root", "chroot", "init_module",
        "finit_module", "delete_module", "kexec_load", "kexec_file_load", "bpf", "perf_event_open",
        "keyctl", "add_key", "request_key", "userfaultfd", "unshare", "setns", "reboot", "swapon", "swapoff",
    ]

    /// <linux/sched.h>'s CLONE_THREAD, which Glibc's Swift module does not export.
    static let cloneThread: UInt64 = 0x0001_0000

    static func install() -> String? {
        guard let filter = seccomp_init(a11y_seccomp_action_allow()) else { return "seccomp_init failed" }
        defer { seccomp_release(filter) }
        let deny = a11y_seccomp_action_errno(UInt16(EPERM))
        for name in refused {
            let number = seccomp_syscall_resolve_name(name)
            guard number >= 0 else { continue }
            guard seccomp_rule_add_array(filter, deny, number, 0, nil) == 0 else { return "cannot refuse \(name)" }
        }
        // No socket at all: the worker's only channel is descriptor 0, made by a11yd.
        let socketCall = seccomp_syscall_resolve_name("socket")
        if socketCall >= 0, seccomp_rule_add_array(filter, deny, socketCall, 0, nil) != 0 { return "cannot refuse socket" }
        // clone for threads only (CLONE_THREAD set); clone3's flags are in memory a filter cannot
        // read, so it is refused with ENOSYS, and glibc falls back to clone.
        let clone = seccomp_syscall_resolve_name("clone")
        if clone >= 0 {
            var notThread = scmp_arg_cmp(arg: 0, op: SCMP_CMP_MASKED_EQ, datum_a: Self.cloneThread, datum_b: 0)
            guard seccomp_rule_add_array(filter, deny, clone, 1, &notThread) == 0 else { return "cannot limit clone" }
        }
        let clone3 = seccomp_syscall_resolve_name("clone3")
        if clone3 >= 0, seccomp_rule_add_array(filter, a11y_seccomp_action_errno(UInt16(ENOSYS)), clone3, 0, nil) != 0 {
            return "cannot refuse clone3"
        }
        let loaded = seccomp_load(filter)
        guard loaded == 0 else { return "seccomp_load: \(Errno(rawValue: -loaded).description)" }
        return nil
    }
}
