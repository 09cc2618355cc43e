// SPDX-License-Identifier: GPL-3.0-or-later
#if canImport(Glibc)
import Glibc
#endif

/// The process environment, read from `environ` without Foundation: the daemon takes one snapshot
/// at start and hands it down (configuration, socket location, socket activation, logging).
public enum Environment {
    /// Every variable as it is now. A name set twice keeps its first value, as getenv(3) does;
    /// an entry without "=" is not a variable and is skipped.
    public static func snapshot() -> [String: String] {
        var result: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let pair = String(cString: pointer)
            if let equals = pair.firstIndex(of: "=") {
                let name = String(pair[..<equals])
                if result[name] == nil { result[name] = String(pair[pair.index(after: equals)...]) }
            }
            entry += 1
        }
        return result
    }

    /// One variable as it is now (getenv(3)), or nil when unset: for a process that reads a few by
    /// name and need not build `snapshot()`'s dictionary (a11ysay, whose start-up is measured).
    public static func variable(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}

/// The user's home folder: `$HOME`, else the passwd entry of the user.
public enum HomeFolder {
    /// `HOME` when set and not empty, else the passwd entry's folder for this process's user,
    /// else "/" (a user with no entry and no HOME: nothing of theirs will be found there).
    public static func current(environment: [String: String]) -> String {
        current(environment: { environment[$0] })
    }

    /// The same, reading each variable through `environment` (`Environment.variable`, or a snapshot).
    public static func current(environment: (String) -> String?) -> String {
        if let home = environment("HOME"), !home.isEmpty { return home }
        return fromPasswd(uid: getuid()) ?? "/"
    }

    /// Where the user's programs keep their settings: `$XDG_CONFIG_HOME` when set and not empty,
    /// else `.config` in the home folder (a11yd's own folder, libpulse's cookie).
    public static func configuration(environment: (String) -> String?) -> String {
        environment("XDG_CONFIG_HOME").flatMap { $0.isEmpty ? nil : $0 } ?? current(environment: environment) + "/.config"
    }

    /// The home folder in `uid`'s passwd entry (getpwuid_r, which unlike getpwuid is safe from any
    /// thread), or nil when there is no entry or it names none. The buffer for the entry's strings
    /// starts at `bufferSize` bytes and doubles while glibc says it is too small (ERANGE).
    public static func fromPasswd(uid: uid_t, bufferSize: Int = 1024) -> String? {
        var size = max(bufferSize, 1)
        while size <= 1 << 20 {
            // The entry's strings point into the buffer: read them while it is alive.
            var buffer = [CChar](repeating: 0, count: size)
            let (status, home) = buffer.withUnsafeMutableBufferPointer { storage -> (Int32, String?) in
                guard let base = storage.baseAddress else { return (EINVAL, nil) }
                var entry = passwd()
                var found: UnsafeMutablePointer<passwd>?
                let status = getpwuid_r(uid, &entry, base, storage.count, &found)
                guard status == 0, found != nil, let folder = entry.pw_dir else { return (status, nil) }
                return (status, String(cString: folder))
            }
            if status == ERANGE {
                size *= 2
                continue
            }
            guard let home, !home.isEmpty else { return nil }
            return home
        }
        return nil
    }
}
