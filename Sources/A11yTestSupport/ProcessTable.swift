// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// What /proc says of a process, for tests that look for the processes a daemon started.

/// An exited process not yet reaped (or one gone altogether): it no longer runs.
public func isZombie(_ pid: Int32) -> Bool {
    guard let fields = statFields(of: pid) else { return true }
    return fields.first == "Z"
}

/// The process's parent, if it still exists.
public func parentProcess(of pid: Int32) -> Int32? {
    statFields(of: pid).flatMap { $0.dropFirst().first }.flatMap { Int32($0) }
}

/// /proc/PID/stat after the command name (which may hold spaces and parentheses): state, ppid, …
private func statFields(of pid: Int32) -> [Substring]? {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else {
        return nil
    }
    return stat[stat.index(after: close)...].split(separator: " ")
}
