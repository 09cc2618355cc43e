// SPDX-License-Identifier: GPL-3.0-or-later
import A11yConfiguration
import A11yEngineWorker
import A11ySSIP
import A11ySystem
import Glibc
import SystemPackage

/// What a11yd takes away from itself at start-up, under systemd or not: the file-system protection
/// a user unit cannot give it without a user namespace (ProtectSystem=strict, ProtectHome=read-only,
/// PrivateTmp=, no exec; docs/service.md, "Hardening"), with Landlock where the kernel has it.
///
/// a11yd then reads anything it could read before, writes only in its configuration folder (the
/// lexicon, `a11ysay --lexicon-add`), makes and removes sockets only in its socket folders, and can
/// execute nothing but itself (its engine worker) and the Piper worker's Python. It must run before any thread starts: Landlock binds the calling thread and
/// what it starts afterwards, not threads already running.
public enum SelfRestriction {
    /// `A11YD_NO_LANDLOCK=1` turns it off (a drop-in's `Environment=`, say, to rule it out).
    public static let switchName = "A11YD_NO_LANDLOCK"

    /// The rules for a daemon started with `options`: the folders are the ones `Daemon.run` will use.
    /// Makes the configuration and socket folders if missing (as a11yd would on first use), since a
    /// rule can only name what exists.
    public static func rules(for options: Daemon.Options) -> [Landlock.Rule] {
        let environment = options.environment
        let configPath = options.configPath ?? DaemonConfiguration.defaultPath(environment: environment)
        // A bad file is Daemon.run's to report; the default folders serve meanwhile.
        let configuration = try? DaemonConfiguration.load(path: configPath, mustExist: false)
        var rules = [
            Landlock.Rule("/", .read),
            // pthread names (/proc/thread-self/comm) and the odd write to /dev/null.
            Landlock.Rule("/proc/self", .writeFile),
            Landlock.Rule("/dev/null", .writeFile),
        ]
        // The one program it may start: itself, as its engine worker (and the dynamic loader that
        // execve runs it with).
        rules += selfExecution.map { Landlock.Rule($0, .execute) }
        // And the Piper worker's interpreter, where its runtime is installed (docs/voices.md), and the
        // one a runtime installed later will run on, taken up at a reload.
        let interpreters = [PiperRuntime.find(environment: environment)?.executedFile, PiperRuntime.installerInterpreter]
        for interpreter in Set(interpreters.compactMap { $0 }) {
            rules.append(Landlock.Rule(interpreter.string, .execute))
        }
        let configFolder = FilePath(configPath).folder.string
        if (try? Directory.make(configFolder, mode: 0o700)) != nil {
            // The lexicon is written to a temporary file and renamed over the old one.
            rules.append(Landlock.Rule(configFolder, [.writeFile, .truncate, .makeRegularFile, .removeFile, .makeDirectory]))
        }
        var sockets = [SocketLocation.resolve(explicit: options.socketPath, configured: configuration?.socketPath, environment: environment)]
        if !options.ssipDisabled, configuration?.ssipEnabled ?? true,
            let ssip = options.ssipSocketPath ?? configuration?.ssipSocketPath ?? SSIPServer.defaultPath(environment: environment)
        {
            sockets.append(ssip)
        }
        for socket in sockets {
            let folder = FilePath(socket).folder.string
            // The socket is bound under a staging name, linked to its path, the staging name removed;
            // a stale file left by a dead daemon is removed too (SocketFile.prepare).
            if (try? Directory.make(folder, mode: 0o700)) != nil {
                rules.append(Landlock.Rule(folder, [.makeSocket, .removeFile]))
            }
        }
        // Ducking's crash record (Ducker: the streams it lowered, so that the next a11yd gives them
        // their volume back after a kill): written to a temporary file beside it, renamed over it,
        // removed once nothing is lowered. Without this rule every write failed (EACCES) and a kill
        // mid-speech left the other streams lowered for good.
        let duckingFolder = FilePath(DaemonConfiguration.duckingStateFile(environment: environment)).folder.string
        if (try? Directory.make(duckingFolder, mode: 0o700)) != nil {
            rules.append(Landlock.Rule(duckingFolder, [.makeRegularFile, .writeFile, .truncate, .removeFile]))
        }
        // libpulse makes $XDG_RUNTIME_DIR/pulse (0700) before it looks for the server's socket there, and
        // says so on stderr at every attempt when it cannot: make it now, as it would.
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            try? Directory.make(runtime + "/pulse", mode: 0o700)
        }
        // And its cookie, for the same reason (PulseCookie).
        PulseCookie.prepare(environment: environment)
        return rules
    }

    /// a11yd's own executable and its ELF interpreter (the dynamic loader execve runs it with).
    static var selfExecution: [String] {
        ["/proc/self/exe"] + (DynamicLoader.path.map { [$0] } ?? [])
    }

    /// Applies `rules(for:)` unless switched off or threads already run; what happened, for the log.
    public static func apply(for options: Daemon.Options) -> Landlock.Outcome {
        if options.environment[switchName] == "1" { return .unavailable("\(switchName)=1") }
        if let threads = Landlock.threadCount(), threads > 1 {
            return .unavailable("\(threads) threads already run, which it would not bind")
        }
        return Landlock.restrictThisThread(to: rules(for: options))
    }
}
