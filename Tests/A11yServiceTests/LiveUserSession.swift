// SPDX-License-Identifier: GPL-3.0-or-later
import A11yProtocol
import A11yTestSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A throwaway user with its own `systemd --user`, as a login gives one: a delegated cgroup, its
/// runtime folder, its session bus and sound server from Debian's user units (dbus-user-session,
/// pipewire, wireplumber, pipewire-pulse). Made only on a machine where it disturbs nothing: as
/// root, with no systemd as PID 1 (a CI machine or a container); there `systemd --user` runs once
/// `/run/systemd/system` exists.
///
/// Everything it makes (the user and its home, `/run/user/UID`, the cgroups, `/run/systemd/system`
/// if it was absent, its scratch folder) it removes in `tearDown()`, killing what runs by PID.
final class LiveUserSession {
    /// The folder whose existence tells systemd's tools that systemd is the init system (sd_booted(3)).
    static let marker = "/run/systemd/system"

    /// Why the live test cannot run here (nil: it can), so that it says so and touches nothing.
    static var skipReason: String? {
        if getuid() != 0 { return "needs root: it makes a throwaway user, its cgroups and \(marker)" }
        let initName = (try? String(contentsOfFile: "/proc/1/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        if initName == "systemd" {
            return "this machine was booted with systemd: a user manager beside logind's would fight it (CI, where PID 1 is not systemd, runs this test)"
        }
        if FileManager.default.fileExists(atPath: marker) {
            return "\(marker) exists although PID 1 is \(initName ?? "unknown"), not systemd: another run's? (remove it if nothing uses it)"
        }
        let needed = [
            "/lib/systemd/systemd": "systemd", "/usr/sbin/useradd": "passwd", "/usr/bin/setpriv": "util-linux",
            "/usr/lib/systemd/user/dbus.socket": "dbus-user-session", "/usr/lib/systemd/user/pipewire-pulse.socket": "pipewire-pulse",
            "/usr/lib/systemd/user/wireplumber.service": "wireplumber", "/usr/bin/spd-say": "speech-dispatcher",
            "/usr/bin/pactl": "pulseaudio-utils",
        ]
        if let missing = needed.sorted(by: { $0.key < $1.key }).first(where: { !FileManager.default.fileExists(atPath: $0.key) }) {
            return "\(missing.key) is missing (Debian package \(missing.value); scripts/install-deps.sh --test installs it)"
        }
        if cgroupRoots.isEmpty { return "no cgroup file system under /sys/fs/cgroup" }
        return nil
    }

    /// The hierarchies a user manager needs a cgroup of its own in: the unified one (cgroup v2), or
    /// in the hybrid layout both systemd's named v1 hierarchy and the unified one beside it.
    static var cgroupRoots: [String] {
        let exists = { FileManager.default.fileExists(atPath: $0 + "/cgroup.procs") }
        if FileManager.default.fileExists(atPath: "/sys/fs/cgroup/cgroup.controllers") { return ["/sys/fs/cgroup"] }
        return ["/sys/fs/cgroup/systemd", "/sys/fs/cgroup/unified"].filter(exists)
    }

    let name: String
    let uid: uid_t
    let gid: gid_t
    let home: String
    /// Root's folder for this session's logs, outside the user's reach.
    let scratch: String
    var runtime: String { "/run/user/\(uid)" }
    var pulseServer: String { "unix:" + runtime + "/pulse/native" }

    private var madeMarker = false
    /// A stamp systemd's manager code writes when it believes it is the system's; `systemd-analyze
    /// --user verify` run by root (another test, say) while the marker exists writes it too.
    static let unitsLoadStamp = "/run/systemd/systemd-units-load"
    private var unitsLoadStampExisted = true
    private var madeUser = false
    private var madeRuntime = false
    private var madeRunUser = false
    /// Cgroup folders this session made, outermost first.
    private var madeCgroups: [String] = []
    private var manager: ChildProcess?

    /// Makes the user (`a11y-live-NNNNN`, a normal login user with a home from /etc/skel) and its
    /// runtime folder. Undoes what it did if a step fails.
    init() async throws {
        scratch = try makeScratchFolder()
        name = "a11y-live-\(UInt32.random(in: 10000...99999))"
        var made: (uid_t, gid_t, String)?
        // Only a user this session made is ever deleted (useradd refuses a name that exists).
        var userMade = false
        do {
            guard getpwnam(name) == nil else { throw TestFailure("user \(name) exists already") }
            let add = try await A11yTestSupport.run(
                "/usr/sbin/useradd", ["--create-home", "--user-group", "--shell", "/bin/sh", "--comment", "a11yd live test", name],
                environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"])
            guard add.status == 0 else { throw TestFailure("useradd \(name) failed: \(add.stderr)") }
            userMade = true
            guard let entry = getpwnam(name) else { throw TestFailure("useradd made \(name) but getpwnam finds no such user") }
            made = (entry.pointee.pw_uid, entry.pointee.pw_gid, String(cString: entry.pointee.pw_dir))
        } catch {
            if userMade { await tearDownUser(name: name) }
            try? FileManager.default.removeItem(atPath: scratch)
            throw error
        }
        (uid, gid, home) = made!
        madeUser = true
        do {
            if !FileManager.default.fileExists(atPath: "/run/user") {
                try makeFolder("/run/user", mode: 0o755)
                madeRunUser = true
            }
            // Never one left by someone else: it would be removed at the end.
            guard mkdir(runtime, 0o700) == 0 else { throw TestFailure("mkdir \(runtime): \(String(cString: strerror(errno)))") }
            madeRuntime = true
            guard chown(runtime, uid, gid) == 0 else { throw TestFailure("chown \(runtime): errno \(errno)") }
        } catch {
            _ = await tearDown()
            throw error
        }
    }

    // MARK: - Running things as the user

    /// What a login gives the user's programs; `PATH` starts with `binFolder` when given.
    func environment(binFolder: String? = nil) -> [String: String] {
        [
            "HOME": home, "USER": name, "LOGNAME": name, "SHELL": "/bin/sh",
            "PATH": ((binFolder.map { [$0] } ?? []) + ["/usr/local/bin", "/usr/bin", "/bin"]).joined(separator: ":"),
            "XDG_RUNTIME_DIR": runtime, "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(runtime)/bus", "LANG": "C.UTF-8",
        ]
    }

    /// `executable arguments…` as the user (setpriv: its uid, gid and groups, nothing else of root's).
    func command(_ executable: String, _ arguments: [String], environment: [String: String]) -> [String] {
        ["--reuid=\(uid)", "--regid=\(gid)", "--init-groups", "/usr/bin/env", "-i"]
            + environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } + [executable] + arguments
    }

    /// Runs a program as the user to its end.
    func run(
        as executable: String, _ arguments: [String], environment: [String: String]? = nil, timeout: Duration = .seconds(60)
    ) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await A11yTestSupport.run(
            "/usr/bin/setpriv", command(executable, arguments, environment: environment ?? self.environment()),
            environment: ["PATH": "/usr/bin:/bin"], timeout: timeout)
    }

    /// Starts a program as the user in the background, its output in the scratch folder.
    func start(as executable: String, _ arguments: [String], environment: [String: String], log: String) throws -> ChildProcess {
        try ChildProcess(
            "/usr/bin/setpriv", command(executable, arguments, environment: environment), environment: ["PATH": "/usr/bin:/bin"],
            logPath: scratch + "/" + log)
    }

    /// `systemctl --user …` as the user; fails with systemctl's words unless it exits 0.
    @discardableResult
    func systemctl(_ arguments: String...) async throws -> String { try await systemctl(arguments) }

    @discardableResult
    func systemctl(_ arguments: [String]) async throws -> String {
        let result = try await run(as: "/usr/bin/systemctl", ["--user", "--no-pager"] + arguments)
        guard result.status == 0 else {
            throw TestFailure("systemctl --user \(arguments.joined(separator: " ")) exited \(result.status): \(result.stdout)\(result.stderr)")
        }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A property of a user unit (`systemctl --user show -p NAME --value`).
    func property(_ name: String, of unit: String) async throws -> String {
        try await systemctl("show", "-p", name, "--value", unit)
    }

    /// What the session's units say, for a failure message.
    func diagnostics() async -> String {
        var text = ""
        for arguments in [["status", "a11yd.socket", "a11yd-ssip.socket", "a11yd.service"], ["list-units", "--all", "--failed"]] {
            let result = try? await run(as: "/usr/bin/systemctl", ["--user", "--no-pager", "--full"] + arguments)
            text += "$ systemctl --user \(arguments.joined(separator: " "))\n\(result?.stdout ?? "")\(result?.stderr ?? "")\n"
        }
        text += "--- a11yd's log:\n" + ((try? String(contentsOfFile: daemonLog, encoding: .utf8)) ?? "")
        return text + "--- systemd --user's log:\n" + (manager?.log ?? "")
    }

    // MARK: - The user's session

    /// Where the test's drop-in sends a11yd's stderr: this manager has no journal to send it to.
    var daemonLog: String { home + "/a11yd-test.log" }

    /// A drop-in for a11yd.service that only moves its log to `daemonLog`, for the test to read.
    func logDaemonToAFile() async throws {
        let dropIns = home + "/.config/systemd/user/a11yd.service.d"
        try makeFolder(dropIns, mode: 0o755)
        try "# The live test's: no journald runs beside this user manager.\n[Service]\nStandardError=append:\(daemonLog)\n"
            .write(toFile: dropIns + "/test-log.conf", atomically: false, encoding: .utf8)
        try await chownTree(home + "/.config")
    }

    /// Gives the user the sound server a Debian 12 desktop runs, deterministically: PipeWire's pulse
    /// server (PulseAudio's units masked for this user, as they conflict over %t/pulse/native) with
    /// a null sink as its only sink, whose monitor the test records.
    func useNullSinkSoundServer() async throws {
        let units = home + "/.config/systemd/user"
        try makeFolder(units, mode: 0o755)
        for unit in ["pulseaudio.service", "pulseaudio.socket"] {
            try FileManager.default.createSymbolicLink(atPath: units + "/" + unit, withDestinationPath: "/dev/null")
        }
        let dropIns = home + "/.config/pipewire/pipewire.conf.d"
        try makeFolder(dropIns, mode: 0o755)
        try PrivatePipeWireServer.nullSinkConfiguration.write(toFile: dropIns + "/a11y-null-sink.conf", atomically: false, encoding: .utf8)
        try await chownTree(home + "/.config")
    }

    /// Gives `path` (and everything under it) to the user.
    func chownTree(_ path: String) async throws {
        let result = try await A11yTestSupport.run("/bin/chown", ["-R", "\(uid):\(gid)", path], environment: ["PATH": "/usr/bin:/bin"])
        guard result.status == 0 else { throw TestFailure("chown -R \(uid):\(gid) \(path) failed: \(result.stderr)") }
    }

    /// Starts `systemd --user` in a delegated cgroup of its own, as user@UID.service would, and waits
    /// until it has reached default.target and the sound server answers with the null sink.
    func startUserManager(timeout: Duration = .seconds(60)) async throws {
        if !FileManager.default.fileExists(atPath: Self.marker) {
            unitsLoadStampExisted = FileManager.default.fileExists(atPath: Self.unitsLoadStamp)
            try FileManager.default.createDirectory(atPath: Self.marker, withIntermediateDirectories: false)
            madeMarker = true
        }
        let relative = "user.slice/user-\(uid).slice/user@\(uid).service"
        var enter: [String] = []
        for root in Self.cgroupRoots {
            var path = root
            for component in relative.split(separator: "/") {
                path += "/" + component
                if !FileManager.default.fileExists(atPath: path) {
                    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
                    madeCgroups.append(path)
                }
            }
            // Delegation: the manager makes its units' cgroups below its own (systemd.resource-control(5)).
            try await chownTree(path)
            enter.append("echo $$ > '\(path)/cgroup.procs'")
        }
        var environment = self.environment()
        environment["SYSTEMD_LOG_TARGET"] = "console"
        let script = enter.joined(separator: " && ") + " && exec /usr/bin/setpriv "
            + command("/lib/systemd/systemd", ["--user"], environment: environment).map { "'\($0)'" }.joined(separator: " ")
        manager = try ChildProcess("/bin/sh", ["-c", script], environment: ["PATH": "/usr/bin:/bin"], logPath: scratch + "/systemd-user.log")

        let deadline = ContinuousClock.now + timeout
        var state = ""
        while !["running", "degraded"].contains(state) {
            guard manager?.isRunning == true else { throw TestFailure("systemd --user exited:\n\(manager?.log ?? "")") }
            guard ContinuousClock.now < deadline else {
                throw TestFailure("systemd --user is '\(state)', not running, after \(timeout):\n\(await diagnostics())")
            }
            try await Task.sleep(for: .milliseconds(50))
            state = (try? await run(as: "/usr/bin/systemctl", ["--user", "is-system-running"]))?.stdout
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        }
        var sink = ""
        while sink != "nullsink" {
            guard ContinuousClock.now < deadline else {
                throw TestFailure("the user's sound server has no default sink 'nullsink' (got '\(sink)') after \(timeout):\n\(await diagnostics())")
            }
            try await Task.sleep(for: .milliseconds(50))
            sink = (try? await run(as: "/usr/bin/pactl", ["get-default-sink"]))?.stdout.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        }
    }

    // MARK: - Clean-up

    /// PIDs of the processes running as the user (from /proc).
    var userProcesses: [pid_t] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        return entries.compactMap { entry in
            guard let pid = pid_t(entry) else { return nil }
            var info = stat()
            guard stat("/proc/\(pid)", &info) == 0, info.st_uid == uid, !isZombie(pid) else { return nil }
            return pid
        }
    }

    /// Names (comm) of the user's processes.
    var userProcessNames: [String] { userProcesses.compactMap(name(of:)) }

    func name(of pid: pid_t) -> String? {
        try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Stops the user manager (SIGTERM: it stops its units), kills by PID whatever of the user's is
    /// left, and removes the cgroups, the runtime folder, the user with its home, the marker and the
    /// scratch folder. Returns what could not be removed (empty: nothing is left).
    func tearDown() async -> [String] {
        if let manager, manager.isRunning {
            manager.signal(SIGTERM)
            _ = try? await manager.waitForExit(timeout: .seconds(20))
            if manager.isRunning { manager.signal(SIGKILL) }
        }
        manager = nil
        // Whatever outlived its manager (a unit's process in the middle of stopping, say).
        for _ in 0..<200 {
            let left = userProcesses + madeCgroups.flatMap(Self.processes(inCgroup:))
            if left.isEmpty { break }
            for pid in left { kill(pid, SIGKILL) }
            try? await Task.sleep(for: .milliseconds(25))
        }
        var leftovers: [String] = []
        // Innermost first: the manager's own sub-cgroups (init.scope, app.slice/…) and then ours.
        for top in madeCgroups.reversed() {
            for folder in Self.subfolders(top).reversed() + [top] where rmdir(folder) != 0 && errno != ENOENT {
                leftovers.append("cgroup \(folder): \(String(cString: strerror(errno)))")
            }
        }
        madeCgroups = []
        if madeRuntime {
            try? FileManager.default.removeItem(atPath: runtime)
            madeRuntime = false
        }
        if madeRunUser {
            rmdir("/run/user")
            madeRunUser = false
        }
        if madeUser {
            if let problem = await tearDownUser(name: name) { leftovers.append(problem) }
            madeUser = false
        }
        if madeMarker {
            if rmdir(Self.marker) != 0 { leftovers.append("\(Self.marker): \(String(cString: strerror(errno)))") }
            if !unitsLoadStampExisted { unlink(Self.unitsLoadStamp) }
            madeMarker = false
        }
        try? FileManager.default.removeItem(atPath: scratch)
        let alive = userProcesses
        if !alive.isEmpty { leftovers.append("processes of uid \(uid) still running: \(alive)") }
        return leftovers
    }

    /// Every folder below `top`, parents before children.
    static func subfolders(_ top: String) -> [String] {
        guard let names = FileManager.default.subpaths(atPath: top) else { return [] }
        return names.sorted().map { top + "/" + $0 }.filter {
            var isFolder: ObjCBool = false
            return FileManager.default.fileExists(atPath: $0, isDirectory: &isFolder) && isFolder.boolValue
        }
    }

    static func processes(inCgroup top: String) -> [pid_t] {
        ([top] + subfolders(top)).flatMap { folder in
            ((try? String(contentsOfFile: folder + "/cgroup.procs", encoding: .utf8)) ?? "").split(separator: "\n").compactMap { pid_t($0) }
        }
    }
}

/// `userdel --remove`: the user, its group and its home. Returns a problem, or nil.
@discardableResult
private func tearDownUser(name: String) async -> String? {
    let result = try? await run("/usr/sbin/userdel", ["--remove", name], environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"])
    if getpwnam(name) != nil { return "user \(name) still exists (userdel: \(result?.stderr ?? "did not run"))" }
    return nil
}

private func makeScratchFolder() throws -> String {
    var template = Array((NSTemporaryDirectory() + "a11y-live-XXXXXX").utf8CString)
    guard let made = mkdtemp(&template) else { throw TestFailure("mkdtemp: errno \(errno)") }
    return String(cString: made)
}

private func makeFolder(_ path: String, mode: Int) throws {
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: mode])
}
