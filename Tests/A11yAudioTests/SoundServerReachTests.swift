// SPDX-License-Identifier: GPL-3.0-or-later
@testable import A11yAudio
import A11yCore
import A11ySystem
import A11yTestSupport
import CPulse
import Foundation
import Logging
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Which server a11yd tries, and why an attempt failed, in words: rules first, row by row.
@Suite struct SoundServerAddressTests {
    func address(_ configured: String?, _ environment: [String: String]) -> SoundServerAddress {
        SoundServerAddress(configured: configured, environment: { environment[$0] })
    }

    @Test func theConfiguredServerWinsThenPULSE_SERVERThenLibpulsesDefault() {
        let environment = ["PULSE_SERVER": "unix:/tmp/p/native", "XDG_RUNTIME_DIR": "/run/user/1000"]
        #expect(address("unix:/srv/native", environment).description == "unix:/srv/native")
        #expect(address(nil, environment).description == "unix:/tmp/p/native (PULSE_SERVER)")
        #expect(address("", ["XDG_RUNTIME_DIR": "/run/user/1000"]).description == "unix:/run/user/1000/pulse/native")
        #expect(address(nil, ["PULSE_RUNTIME_PATH": "/x/pulse", "XDG_RUNTIME_DIR": "/run/user/1000"]).description == "unix:/x/pulse/native")
        #expect(address(nil, [:]).description == "libpulse's default server")
    }

    @Test(arguments: [
        ("unix:/run/user/1000/pulse/native", "/run/user/1000/pulse/native"),
        ("/run/pulse/native", "/run/pulse/native"),
        ("{0123abcd}unix:/run/pulse/native tcp:host", "/run/pulse/native"),
        ("tcp:localhost:4713", nil),
        ("localhost", nil),
    ] as [(String, String?)])
    func aLocalSocketIsFoundInTheServerString(_ server: String, _ path: String?) {
        #expect(address(server, [:]).socketPath == path)
    }

    @Test(arguments: [
        (PA_ERR_CONNECTIONREFUSED, .missing, "no such socket"),
        (PA_ERR_CONNECTIONREFUSED, .notASocket, "not a socket"),
        (PA_ERR_CONNECTIONREFUSED, .refused, "refused: nothing listens there"),
        (PA_ERR_CONNECTIONREFUSED, .accessDenied, "access denied"),
        (PA_ERR_CONNECTIONREFUSED, nil, "refused: nothing listens there"),
        (PA_ERR_ACCESS, nil, "access denied by the server"),
        (PA_ERR_PROTOCOL, .accepts, "protocol error: not a PulseAudio or PipeWire pulse server"),
        (PA_ERR_TIMEOUT, nil, "timed out"),
        (PA_ERR_INVALIDSERVER, nil, "not a valid server address"),
    ] as [(pa_error_code, SoundServerFailure.SocketState?, String)])
    func aFailureIsSaidInWords(_ code: pa_error_code, _ socket: SoundServerFailure.SocketState?, _ words: String) {
        #expect(SoundServerFailure(code: Int32(code.rawValue), socket: socket).description == words)
    }

    /// The socket itself is asked: a missing path, a file that is no socket, a socket nobody
    /// listens on, and one that accepts.
    @Test func theProbeTellsAMissingSocketFromADeadOneAndALiveOne() throws {
        let folder = NSTemporaryDirectory() + "a11yd-probe-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(SoundServerFailure.SocketState.probe(folder + "/none") == .missing)
        #expect(SoundServerFailure.SocketState.probe(folder + "/none/native") == .missing)
        _ = FileManager.default.createFile(atPath: folder + "/file", contents: Data())
        #expect(SoundServerFailure.SocketState.probe(folder + "/file") == .notASocket)

        let dead = try boundSocket(folder + "/dead", listening: false)
        defer { close(dead) }
        #expect(SoundServerFailure.SocketState.probe(folder + "/dead") == .refused)
        let live = try boundSocket(folder + "/live", listening: true)
        defer { close(live) }
        #expect(SoundServerFailure.SocketState.probe(folder + "/live") == .accepts)
    }

    func boundSocket(_ path: String, listening: Bool) throws -> Int32 {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        let address = try #require(UnixSocketAddress(path: path))
        #expect(address.withSockaddr { bind(descriptor, $0, $1) } == 0)
        if listening { #expect(listen(descriptor, 4) == 0) }
        return descriptor
    }
}

/// An output whose sound server is not there: the log, `status` and a track say which server and
/// why at once, and all of it follows when the server appears.
@Suite("A sound server that is not there", .serialized)
struct SoundServerReachTests {
    @Test(arguments: SoundServerKind.allCases)
    func noServerIsSaidAtOnceWithWhereAndWhyThenItsArrival(_ kind: SoundServerKind) async throws {
        let server = try kind.make(started: false)
        let log = RecordedLog()
        let output = PulseOutput(server: server.serverAddress, logger: log.logger(level: .info))
        defer { output.close() }
        let socketPath = try #require(SoundServerAddress(configured: server.serverAddress, environment: { _ in nil }).socketPath)

        #expect(await waitFor(5) { output.serverStatus().state == .unreachable }, "\(output.serverStatus())")
        #expect(output.serverStatus() == SoundServerStatus(server: server.serverAddress, state: .unreachable, reason: "no such socket"))
        let warnings = log.all.filter { $0.level == .warning }
        #expect(warnings.count == 1, "said once, not at every attempt: \(warnings)")
        #expect(warnings.first?.message == "no sound server reachable at \(server.serverAddress) (no such socket); trying again", "\(warnings)")

        // A track begun now is told that nothing is reachable, and why, without waiting for a grace.
        let track = output.begin(format: mono22k)
        output.append(tone(seconds: 0.2), to: track.id)
        output.end(track.id)
        var iterator = track.progress.makeAsyncIterator()
        let first = try #require(await iterator.next())
        let expected = SpeechError(.audioUnavailable, "no sound server reachable at \(server.serverAddress) (no such socket)")
        #expect(first.connection == .unreachable(expected), "\(first)")

        // The socket appears with nobody behind it: a new reason, said once more.
        let dead = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        try FileManager.default.createDirectory(atPath: (socketPath as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let bound = try #require(UnixSocketAddress(path: socketPath)).withSockaddr { bind(dead, $0, $1) }
        #expect(bound == 0)
        #expect(await waitFor(5) { output.serverStatus().reason == "refused: nothing listens there" }, "\(output.serverStatus())")
        close(dead)
        unlink(socketPath)
        #expect(log.all.filter { $0.level == .warning }.count == 2, "\(log.all)")

        // The server arrives: connected, the log says so, and the track plays.
        try server.start()
        #expect(await waitFor(5) { output.serverStatus().state == .connected }, "\(output.serverStatus())")
        #expect(output.serverStatus().reason == nil)
        #expect(log.all.contains { $0.level == .info && $0.message.hasPrefix("connected to the sound server at") }, "\(log.all)")
        let heard = output.begin(format: mono22k)
        output.append(tone(seconds: 0.1), to: heard.id)
        output.end(heard.id)
        #expect(await waitFor(5) { output.progress(of: heard.id)?.isFinished == true }, "played once the server is there")
        server.stop()
    }

    /// A server that went away is waited for (the item's grace) and says so: it is reconnecting,
    /// never "unreachable", whatever the attempts meanwhile find.
    @Test func aServerThatWentAwayIsConnectingNotUnreachable() async throws {
        let rig = try await Rig()
        rig.server.stop()
        #expect(await waitFor(5) { !rig.output.isConnected }, "the loss seen")
        try await Task.sleep(for: .milliseconds(400))
        let status = rig.output.serverStatus()
        #expect(status.state == .connecting, "\(status)")
        let track = rig.output.begin(format: mono22k)
        #expect(rig.output.progress(of: track.id)?.connection == .reconnecting)
        _ = try await rig.serverBack("after the loss")
    }
}
