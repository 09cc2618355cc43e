// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yJSONLines
import A11yProtocol
import Foundation
import NIOCore
import NIOPosix

/// The JSON Lines client every test uses: send requests (or raw bytes), wait for the messages you
/// expect. Framed by A11yJSONLines' own decoder, as the daemon frames what it reads.
public actor TestClient {
    private let channel: NIOAsyncChannel<LineBatch, ByteBuffer>
    private var outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>?
    public private(set) var received: [ServerMessage] = []
    /// When each of `received` arrived, on `MonitorRecorder.now()`'s clock (CLOCK_MONOTONIC).
    public private(set) var arrivals: [Double] = []
    private var reader: Task<Void, Never>?
    public private(set) var closed = false

    private init(channel: NIOAsyncChannel<LineBatch, ByteBuffer>) {
        self.channel = channel
    }

    deinit {
        // NIO requires the writer to be finished before the channel goes away.
        outbound?.finish()
        reader?.cancel()
    }

    public static func connect(path: String) async throws -> TestClient {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .connect(unixDomainSocketPath: path) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineFrameDecoder()))
                    // Half-closure: `closeWriting` (finishing the writer) sends EOF and keeps reading.
                    return try NIOAsyncChannel<LineBatch, ByteBuffer>(
                        wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
                }
            }
        let client = TestClient(channel: channel)
        await client.startReading()
        return client
    }

    private func startReading() {
        let (inbound, outbound) = (channel.inbound, channel.outbound)
        self.outbound = outbound
        reader = Task {
            do {
                for try await batch in inbound {
                    for line in batch.lines {
                        if let message = try? LineCodec.decodeMessage(line.readableBytesView) { self.record(message) }
                    }
                }
            } catch {}
            self.markClosed()
        }
    }

    private func record(_ message: ServerMessage) {
        received.append(message)
        arrivals.append(MonitorRecorder.now())
    }

    /// The events of `utterance` with the moment each arrived (`MonitorRecorder.now()`'s clock).
    public func timedEvents(of utterance: UInt64) -> [(message: ServerMessage, at: Double)] {
        zip(received, arrivals).filter { $0.0.utterance == utterance }.map { ($0.0, $0.1) }
    }
    private func markClosed() { closed = true }

    /// Sends raw text (one or more lines) in one write.
    public func sendRaw(_ text: String) async throws {
        try await outbound?.write(ByteBuffer(string: text))
    }

    /// Sends bytes as they are (invalid UTF-8 included) in one write.
    public func sendBytes(_ bytes: [UInt8]) async throws {
        try await outbound?.write(ByteBuffer(bytes: bytes))
    }

    /// Sends requests in one write (so they arrive together).
    public func send(_ requests: RequestLine...) async throws {
        try await sendRaw(requests.map { LineCodec.encodeString($0) + "\n" }.joined())
    }

    /// Posts and returns the utterance number from the reply.
    public func post(_ post: Post) async throws -> UInt64 {
        let tag = RequestID.string(UUID().uuidString)
        try await send(RequestLine(.post(post), id: tag))
        let reply = try await waitFor("reply to post") { $0.id == tag }
        guard let utterance = reply.utterance else {
            throw TestFailure("post refused: \(reply.error?.message ?? "?")")
        }
        return utterance
    }

    /// Half-closes: the daemon sees the end of this client's lines.
    public func closeWriting() {
        outbound?.finish()
    }

    /// Closes the connection (both directions).
    public func close() async {
        outbound?.finish()
        try? await channel.channel.close()
    }

    /// Waits (up to `timeout`) for a message matching `matches`.
    @discardableResult
    public func waitFor(
        _ what: String, timeout: Duration = .seconds(20), _ matches: @Sendable (ServerMessage) -> Bool
    ) async throws -> ServerMessage {
        let deadline = ContinuousClock.now + timeout
        // Each message is looked at once: a flood's tests wait among 100,000 of them.
        var checked = 0
        while true {
            if let message = received[checked...].first(where: matches) { return message }
            checked = received.count
            if ContinuousClock.now > deadline || closed {
                throw TestFailure("no \(what) (closed: \(closed)); got \(received.map { LineCodec.encodeString($0) })")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    public func finished(_ utterance: UInt64, timeout: Duration = .seconds(30)) async throws -> ServerMessage {
        try await waitFor("finished #\(utterance)", timeout: timeout) { $0.event == "finished" && $0.utterance == utterance }
    }

    /// Waits until the daemon closes the connection.
    public func waitUntilClosed(timeout: Duration = .seconds(15)) async throws {
        let deadline = ContinuousClock.now + timeout
        while !closed {
            guard ContinuousClock.now < deadline else { throw TestFailure("connection still open after \(timeout)") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    public func events(of utterance: UInt64) -> [ServerMessage] {
        received.filter { $0.event != nil && $0.utterance == utterance }
    }

    /// Finished events in arrival order, as (utterance, reason).
    public func finishes() -> [(UInt64, FinishReason)] {
        received.compactMap { message in
            guard case .event(.finished(let id, _, let reason, _)) = message else { return nil }
            return (id.rawValue, reason)
        }
    }
}

extension Post {
    /// A text post, as tests write them.
    public static func say(
        _ text: String, kind: NotificationKind = .announcement, queue: Bool? = nil, priority: Priority? = nil,
        rate: Double? = nil, lang: String? = nil, voice: String? = nil
    ) -> Post {
        Post(text: text, kind: kind, queue: queue, priority: priority, lang: lang, rate: rate, voice: voice)
    }
}

/// The message as its JSON fields, for assertions that read like the wire (docs/protocol.md):
/// nil where the line has no such field.
extension ServerMessage {
    public var id: RequestID? {
        switch self {
        case .reply(_, let id), .failure(_, let id): id
        case .event: nil
        }
    }

    public var ok: Bool? {
        switch self {
        case .reply: true
        case .failure: false
        case .event: nil
        }
    }

    public var error: WireError? {
        if case .failure(let error, _) = self { return error }
        return nil
    }

    public var reply: Reply? {
        if case .reply(let reply, _) = self { return reply }
        return nil
    }

    public var speechEvent: SpeechEvent? {
        if case .event(let event) = self { return event }
        return nil
    }

    public var utterance: UInt64? {
        if case .posted(let id)? = reply { return id.rawValue }
        return speechEvent?.utterance?.rawValue
    }

    /// A `batch` reply's utterances, in the order of its posts.
    public var utterances: [UInt64]? {
        if case .postedBatch(let ids)? = reply { return ids.map(\.rawValue) }
        return nil
    }

    public var effective: Bool? {
        if case .control(let effective)? = reply { return effective }
        return nil
    }

    public var state: String? {
        if case .status(let status)? = reply { return status.state.wireName }
        return nil
    }

    public var current: ItemSummary? {
        if case .status(let status)? = reply { return status.current }
        return nil
    }

    public var queue: [ItemSummary]? {
        if case .status(let status)? = reply { return status.queue }
        return nil
    }

    public var ipa: String? {
        if case .pronunciation(let ipa)? = reply { return ipa }
        return nil
    }

    public var audio: RenderedAudio? {
        if case .audio(let audio)? = reply { return audio }
        return nil
    }

    public var event: String? {
        switch speechEvent {
        case .started: "started"
        case .word: "word"
        case .mark: "mark"
        case .paused, .queuePaused: "paused"
        case .resumed: "resumed"
        case .finished: "finished"
        case nil: nil
        }
    }

    public var start: Int? {
        if case .word(_, let start, _)? = speechEvent { return start }
        return nil
    }

    public var length: Int? {
        if case .word(_, _, let length)? = speechEvent { return length }
        return nil
    }

    public var name: String? {
        if case .mark(_, let name)? = speechEvent { return name }
        return nil
    }

    public var text: String? {
        if case .finished(_, let text, _, _)? = speechEvent { return text }
        return nil
    }

    public var reason: FinishReason? {
        if case .finished(_, _, let reason, _)? = speechEvent { return reason }
        return nil
    }

    public var successful: Bool? { reason?.isSuccessful }

    public var message: String? {
        if case .finished(_, _, _, let message)? = speechEvent { return message }
        return nil
    }
}
