import A11yAudio
import A11yCore
import A11yDaemon
import A11yEngine
import A11yPronunciation
import A11yProtocol
import A11yTestSupport
import Foundation
import Logging
import NIOCore
import NIOPosix
import Testing

/// The real daemon (real eSpeak-NG, real libpulse) on a private PulseAudio with a null sink,
/// in this process, listening on a temporary socket.
final class DaemonHarness {
    let pulse: PrivatePulseServer
    let socketPath: String
    let speech: SpeechService
    private let tasks: [Task<Void, any Error>]

    static let logger: Logger = {
        var logger = Logger(label: "a11yd-test")
        logger.logLevel = .warning
        return logger
    }()

    init(configuration: DaemonConfiguration = DaemonConfiguration()) async throws {
        pulse = try PrivatePulseServer()
        // A folder that does not exist yet: the daemon makes it, owner-only.
        socketPath = pulse.directory.path + "/runtime/a11yd/socket"
        let engine = try EspeakEngine(logger: Self.logger)
        let output = PulseOutput(server: pulse.serverAddress, logger: Self.logger)
        try await output.waitUntilConnected()
        var configuration = configuration
        configuration.voice.language = configuration.voice.language ?? "fr"
        speech = SpeechService(
            engine: engine, output: output, configuration: configuration, pronouncer: Pronouncer(engine: engine),
            environment: [:], logger: Self.logger)
        let server = SocketServer(listener: .path(socketPath), speech: speech, logger: Self.logger)
        let speech = self.speech
        tasks = [Task { try await speech.run() }, Task { try await server.run() }]
        let deadline = ContinuousClock.now + .seconds(10)
        while !FileManager.default.fileExists(atPath: socketPath) {
            guard ContinuousClock.now < deadline else { throw SpeechError(.internal, "daemon did not listen") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    func client() async throws -> TestClient {
        try await TestClient.connect(path: socketPath)
    }

    func recorder() throws -> MonitorRecorder {
        let recorder = MonitorRecorder(server: pulse.serverAddress)
        try recorder.start()
        return recorder
    }

    func shutDown() async {
        await speech.stopAll()
        for task in tasks { task.cancel() }
    }
}

/// A protocol client for tests: send lines, wait for the messages you expect.
actor TestClient {
    private let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
    private var outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>?
    private(set) var received: [ServerMessage] = []
    private var reader: Task<Void, Never>?
    private var closed = false

    private init(channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>) {
        self.channel = channel
    }

    deinit {
        // NIO requires the writer to be finished before the channel goes away.
        outbound?.finish()
        reader?.cancel()
    }

    static func connect(path: String) async throws -> TestClient {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .connect(unixDomainSocketPath: path) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        let client = TestClient(channel: channel)
        await client.startReading()
        return client
    }

    private func startReading() {
        let channel = channel
        let (inbound, outbound) = (channel.inbound, channel.outbound)
        self.outbound = outbound
        reader = Task {
            var carry: [UInt8] = []
            do {
                for try await buffer in inbound {
                    for byte in buffer.readableBytesView {
                        if byte == UInt8(ascii: "\n") {
                            let line = String(decoding: carry, as: UTF8.self)
                            carry.removeAll()
                            if let message = try? LineCodec.decodeMessage(line) { self.record(message) }
                        } else {
                            carry.append(byte)
                        }
                    }
                }
            } catch {}
            self.markClosed()
        }
    }

    private func record(_ message: ServerMessage) { received.append(message) }
    private func markClosed() { closed = true }

    /// Sends raw text (one or more lines) in one write.
    func sendRaw(_ text: String) async throws {
        try await outbound?.write(ByteBuffer(string: text))
    }

    func send(_ requests: ClientRequest...) async throws {
        try await sendRaw(requests.map { LineCodec.encode($0) + "\n" }.joined())
    }

    /// Posts and returns the utterance number from the reply.
    func post(_ request: ClientRequest) async throws -> UInt64 {
        var request = request
        let tag = RequestID.string(UUID().uuidString)
        request.id = tag
        try await send(request)
        let reply = try await waitFor("reply to post") { $0.id == tag }
        guard let utterance = reply.utterance else {
            throw SpeechError(.internal, "post refused: \(reply.error?.message ?? "?")")
        }
        return utterance
    }

    func closeWriting() async {
        outbound?.finish()
    }

    /// Waits (up to `timeout`) for a message matching `matches` that has not been consumed by index.
    @discardableResult
    func waitFor(
        _ what: String, timeout: Duration = .seconds(20), _ matches: @Sendable (ServerMessage) -> Bool
    ) async throws -> ServerMessage {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let message = received.first(where: matches) { return message }
            if ContinuousClock.now > deadline || closed {
                throw SpeechError(.internal, "timed out waiting for \(what); got \(received.map { LineCodec.encode($0) })")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    func finished(_ utterance: UInt64, timeout: Duration = .seconds(30)) async throws -> ServerMessage {
        try await waitFor("finished #\(utterance)", timeout: timeout) { $0.event == "finished" && $0.utterance == utterance }
    }

    func events(of utterance: UInt64) -> [ServerMessage] {
        received.filter { $0.event != nil && $0.utterance == utterance }
    }

    /// Finished events in arrival order, as (utterance, reason).
    func finishes() -> [(UInt64, FinishReason)] {
        received.compactMap { message in
            guard message.event == "finished", let id = message.utterance, let reason = message.reason else { return nil }
            return (id, reason)
        }
    }
}

extension ClientRequest {
    static func say(
        _ text: String, kind: NotificationKind = .announcement, queue: Bool? = nil, priority: Priority? = nil,
        rate: Double? = nil, lang: String? = nil
    ) -> ClientRequest {
        var request = ClientRequest.post(text, kind: kind, queue: queue, priority: priority)
        request.rate = rate
        request.lang = lang
        return request
    }
}

/// A long French sentence (about 6 s at normal rate), for pausing and cutting mid-speech.
let longSentence = """
    La synthèse vocale lit ce long paragraphe pendant plusieurs secondes, afin que nous puissions \
    l'interrompre, le mettre en pause puis le reprendre exactement là où il s'était arrêté.
    """
