// SPDX-License-Identifier: GPL-3.0-or-later
/// Why the daemon could not start or go on.
public struct DaemonError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Code: Sendable, Equatable {
        case badSocketActivation, engineUnavailable
    }

    private let code: Code
    public let message: String

    private init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// systemd passed sockets a11yd cannot use.
    public static func badSocketActivation(_ message: String) -> DaemonError { DaemonError(.badSocketActivation, message) }
    /// eSpeak-NG could not be started.
    public static func engineUnavailable(_ message: String) -> DaemonError { DaemonError(.engineUnavailable, message) }

    public var description: String { message }
}
