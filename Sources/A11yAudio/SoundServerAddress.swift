// SPDX-License-Identifier: GPL-3.0-or-later
import A11ySystem
import CPulse
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// The sound server a11yd connects to, as libpulse resolves it, named so that a person can find it:
/// the `[audio] server` value, else `PULSE_SERVER`, else libpulse's default, the user's own socket
/// (`$PULSE_RUNTIME_PATH/native`, else `$XDG_RUNTIME_DIR/pulse/native`; libpulse then also tries
/// the system-wide `/var/run/pulse/native`).
struct SoundServerAddress: Equatable, CustomStringConvertible {
    enum Source: Equatable {
        case configured, environment, libpulseDefault
    }

    /// The server string, as libpulse takes it (`unix:/path`, `/path`, `tcp:host:port`, several
    /// separated by spaces); for libpulse's default, the user's socket as `unix:PATH`, or nil
    /// where libpulse itself would look elsewhere (no runtime folder in the environment).
    let server: String?
    let source: Source

    init(configured: String?, environment: (String) -> String?) {
        if let configured, !configured.isEmpty {
            server = configured
            source = .configured
        } else if let variable = environment("PULSE_SERVER"), !variable.isEmpty {
            server = variable
            source = .environment
        } else {
            source = .libpulseDefault
            if let runtime = environment("PULSE_RUNTIME_PATH"), !runtime.isEmpty {
                server = "unix:" + FilePath(runtime).appending("native").string
            } else if let runtime = environment("XDG_RUNTIME_DIR"), !runtime.isEmpty {
                server = "unix:" + FilePath(runtime).appending("pulse/native").string
            } else {
                server = nil
            }
        }
    }

    /// The server as the log, `status` and an item's error name it.
    var description: String {
        switch source {
        case .configured: server ?? ""
        case .environment: (server ?? "") + " (PULSE_SERVER)"
        case .libpulseDefault: server ?? "libpulse's default server"
        }
    }

    /// The local socket of the first server named, which a failed attempt can be asked about:
    /// `unix:PATH` or an absolute path, after an optional `{machine-id}` prefix.
    var socketPath: String? {
        guard let first = server?.split(whereSeparator: { $0 == " " || $0 == "\t" }).first else { return nil }
        var entry = Substring(first)
        if entry.hasPrefix("{"), let close = entry.firstIndex(of: "}") { entry = entry[entry.index(after: close)...] }
        if entry.hasPrefix("unix:") { entry = entry.dropFirst("unix:".count) }
        return entry.hasPrefix("/") ? String(entry) : nil
    }
}

/// Why an attempt to reach the sound server failed, in a few words a person understands: from
/// libpulse's error and, when libpulse only says "Connection refused" of a local socket, from
/// what the socket itself says (libpulse says the same for a missing socket and a dead one).
enum SoundServerFailure: Equatable, CustomStringConvertible {
    case noSuchSocket
    case notASocket
    case refused
    case accessDenied
    case accessDeniedByServer
    case protocolError
    case timedOut
    case noAnswer
    case invalidServer
    case other(String)

    /// What a connect(2) to the local socket found, for `init(code:socket:)`.
    enum SocketState: Equatable {
        case missing, notASocket, refused, accessDenied, accepts
        case other(Errno)

        /// Asks the socket at `path` (a non-blocking connect, closed at once; a path that refuses
        /// is looked at, since connect(2) refuses a file that is no socket just as a dead socket).
        static func probe(_ path: String) -> SocketState {
            switch SocketProbe.connectError(path: path, blocking: false) {
            case nil: return .accepts
            case .noSuchFileOrDirectory?, .notDirectory?: return .missing
            case .connectionRefused?:
                var info = stat()
                let isSocket = stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFSOCK
                return isSocket ? .refused : .notASocket
            case .permissionDenied?, .notPermitted?: return .accessDenied
            case .notSocket?: return .notASocket
            case let errno?: return .other(errno)
            }
        }
    }

    /// From libpulse's error code (`pa_context_errno`) and, for a local socket, what it says.
    init(code: Int32, socket: SocketState?) {
        switch code {
        case Int32(PA_ERR_CONNECTIONREFUSED.rawValue):
            switch socket {
            case .missing?: self = .noSuchSocket
            case .notASocket?: self = .notASocket
            case .accessDenied?: self = .accessDenied
            case .other(let errno)?: self = .other(errno.description)
            case .refused?, .accepts?, nil: self = .refused
            }
        case Int32(PA_ERR_ACCESS.rawValue), Int32(PA_ERR_AUTHKEY.rawValue): self = .accessDeniedByServer
        case Int32(PA_ERR_PROTOCOL.rawValue), Int32(PA_ERR_VERSION.rawValue), Int32(PA_ERR_NOTSUPPORTED.rawValue):
            self = .protocolError
        case Int32(PA_ERR_TIMEOUT.rawValue): self = .timedOut
        case Int32(PA_ERR_INVALIDSERVER.rawValue), Int32(PA_ERR_INVALID.rawValue): self = .invalidServer
        default: self = .other(PulseError(code: code).description)
        }
    }

    /// Whether the attempt found nobody to play to. A server that took the connection and did not
    /// answer in time may only be slow (one starting on a busy machine): waited for, as one that
    /// went away is.
    var findsNobody: Bool { self != .noAnswer }

    var description: String {
        switch self {
        case .noSuchSocket: "no such socket"
        case .notASocket: "not a socket"
        case .refused: "refused: nothing listens there"
        case .accessDenied: "access denied"
        case .accessDeniedByServer: "access denied by the server"
        case .protocolError: "protocol error: not a PulseAudio or PipeWire pulse server"
        case .timedOut: "timed out"
        case .noAnswer: "the server did not answer"
        case .invalidServer: "not a valid server address"
        case .other(let text): text
        }
    }
}
