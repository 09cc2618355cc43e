// SPDX-License-Identifier: GPL-3.0-or-later
import CLandlock
import Glibc
import SystemPackage

/// Landlock (landlock(7)): an unprivileged process gives up file-system rights, for good, for the
/// calling thread and everything it starts afterwards (threads and programs). No namespace and no
/// privilege are needed, only `no_new_privs`, so it works where a user manager cannot build mount
/// namespaces; kernels without it (before 5.13, or `lsm=` without landlock) are told apart from
/// failures by `Landlock.Outcome.unavailable`.
public enum Landlock {
    /// File-system rights (the kernel's `LANDLOCK_ACCESS_FS_*` bits).
    public struct Access: OptionSet, Sendable, Hashable {
        public let rawValue: UInt64
        public init(rawValue: UInt64) { self.rawValue = rawValue }

        public static let execute = Access(rawValue: 1 << 0)
        public static let writeFile = Access(rawValue: 1 << 1)
        public static let readFile = Access(rawValue: 1 << 2)
        public static let readDirectory = Access(rawValue: 1 << 3)
        public static let removeDirectory = Access(rawValue: 1 << 4)
        public static let removeFile = Access(rawValue: 1 << 5)
        public static let makeCharacterDevice = Access(rawValue: 1 << 6)
        public static let makeDirectory = Access(rawValue: 1 << 7)
        public static let makeRegularFile = Access(rawValue: 1 << 8)
        public static let makeSocket = Access(rawValue: 1 << 9)
        public static let makeFifo = Access(rawValue: 1 << 10)
        public static let makeBlockDevice = Access(rawValue: 1 << 11)
        public static let makeSymlink = Access(rawValue: 1 << 12)
        /// ABI 2: link or rename a file into another folder.
        public static let refer = Access(rawValue: 1 << 13)
        /// ABI 3: truncate(2), O_TRUNC.
        public static let truncate = Access(rawValue: 1 << 14)

        public static let read: Access = [.readFile, .readDirectory]
        /// The rights that apply to a file itself (the others apply to a folder's entries).
        public static let fileRights: Access = [.execute, .writeFile, .readFile, .truncate]

        /// Every file-system right ABI `abi` can take away.
        public static func handled(byABI abi: Int) -> Access {
            var all = Access(rawValue: (1 << 13) - 1)
            if abi >= 2 { all.insert(.refer) }
            if abi >= 3 { all.insert(.truncate) }
            return all
        }
    }

    /// `access` to `path` and everything beneath it.
    public struct Rule: Sendable, Hashable {
        public var path: String
        public var access: Access
        public init(_ path: String, _ access: Access) {
            self.path = path
            self.access = access
        }
    }

    public enum Outcome: Sendable, Equatable {
        /// In force with this ABI version.
        case restricted(abi: Int)
        /// Not applied, and why (no Landlock in this kernel, threads already running…).
        case unavailable(String)
    }

    /// The Landlock ABI version of this kernel, or why there is none.
    public static func abiVersion() -> Result<Int, Failure> {
        let version = a11y_landlock_abi_version()
        guard version >= 1 else { return .failure(Failure("Landlock is not available", SystemCall.lastError)) }
        return .success(version)
    }

    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public let what: String
        public let errno: Errno
        init(_ what: String, _ errno: Errno) {
            self.what = what
            self.errno = errno
        }
        public var description: String { "\(what): \(errno)" }
    }

    /// Takes away every file-system right the kernel's Landlock handles, except those `rules` grant,
    /// from the calling thread and what it starts afterwards. Sets `no_new_privs` first (Landlock
    /// needs it without CAP_SYS_ADMIN). A rule whose path does not exist grants nothing.
    /// Threads that already run keep their rights: call this before starting any.
    public static func restrictThisThread(to rules: [Rule]) -> Outcome {
        let abi: Int
        switch abiVersion() {
        case .success(let version): abi = version
        case .failure(let failure): return .unavailable(failure.description)
        }
        let handled = Access.handled(byABI: abi)
        let ruleset = Int32(truncatingIfNeeded: a11y_landlock_create_ruleset(handled.rawValue))
        guard ruleset >= 0 else { return .unavailable(Failure("landlock_create_ruleset", SystemCall.lastError).description) }
        defer { close(ruleset) }
        for rule in rules {
            let descriptor = a11y_open_path(rule.path)
            guard descriptor >= 0 else { continue }
            defer { close(descriptor) }
            var access = rule.access.intersection(handled)
            var info = stat()
            if fstat(descriptor, &info) == 0, info.st_mode & S_IFMT != S_IFDIR { access.formIntersection(.fileRights) }
            guard !access.isEmpty else { continue }
            guard a11y_landlock_add_path_rule(ruleset, access.rawValue, descriptor) == 0 else {
                return .unavailable(Failure("landlock_add_rule \(rule.path)", SystemCall.lastError).description)
            }
        }
        guard a11y_set_no_new_privs() == 0 else { return .unavailable(Failure("prctl(PR_SET_NO_NEW_PRIVS)", SystemCall.lastError).description) }
        guard a11y_landlock_restrict_self(ruleset) == 0 else { return .unavailable(Failure("landlock_restrict_self", SystemCall.lastError).description) }
        return .restricted(abi: abi)
    }

    /// The number of threads this process runs (`Threads:` in /proc/self/status), nil if unknown.
    public static func threadCount() -> Int? {
        guard let status = try? TextFile.read("/proc/self/status", limit: 64 * 1024) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("Threads:") {
            return Int(line.dropFirst("Threads:".count).trimmingPrefix(while: { $0 == " " || $0 == "\t" }))
        }
        return nil
    }
}
