// SPDX-License-Identifier: GPL-3.0-or-later
import A11yAudio

#if canImport(Glibc)
import Glibc
#endif

extension DaemonConfiguration {
    /// What the audio output is told about ducking. The state file is always given, even with
    /// ducking off, so that streams a crashed a11yd left lowered are restored whatever the setting.
    public func ducking(environment: [String: String]) -> Ducking {
        Ducking(
            lowerBy: duck == .speaking ? Double(duckDecibels) : nil,
            stateFile: Self.duckingStateFile(environment: environment))
    }

    /// `$XDG_RUNTIME_DIR/a11yd/ducked` (or `/tmp/a11yd-UID/ducked` without a runtime dir), beside
    /// the default socket: per user, gone at logout, as the streams it names are.
    public static func duckingStateFile(environment: [String: String]) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty { return runtime + "/a11yd/ducked" }
        return "/tmp/a11yd-\(getuid())/ducked"
    }
}
