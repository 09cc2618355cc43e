// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yFrontEnd
import A11yProtocol
import NIOCore

/// Answers the requests of one connection through the speech API.
///
/// Each line is applied on its own, in order, however the bytes were split into reads: only an
/// explicit `batch` reaches the queue in one step (docs/protocol.md, "Batches").
struct JSONLinesConnection: Sendable {
    let client: ClientID
    let speech: any SpeechControl
    let router: JSONLinesRouter
    let outbox: Outbox<ServerMessage>
    /// The framing's limit, named in the `line_too_long` refusal.
    var maximumLineLength = LineFrameDecoder.defaultMaximumLength

    func handle(_ lines: LineBatch) async {
        for line in lines.lines where !line.readableBytesView.allSatisfy(Self.isWhitespace) {
            // Backpressure, line by line within a read too: no more requests are read while this
            // client's answers wait unread.
            await outbox.waitForRoom()
            // Decoded, checked and converted for the speech API once, here.
            switch LineCodec.decodeCheckedRequest(line.readableBytesView) {
            case .failure(let failure):
                await router.send(.failure(failure.error, to: failure.id), to: client)
            case .success(let request):
                switch request.action {
                case .post(let post): await accept([post], request.id) { .posted($0[0]) }
                case .batch(let posts): await accept(posts, request.id) { .postedBatch($0) }
                default: await router.send(await answer(request), to: client)
                }
            }
        }
        if lines.skippedOverlongLine {
            await router.send(
                .failure(for: ProtocolError(.lineTooLong, "a line exceeded \(maximumLineLength) bytes and was ignored"), to: nil),
                to: client)
        }
    }

    /// Prepares every post (all or none: a batch with one bad post is refused whole), replies, and
    /// queues them in one step. The reply goes out before the first event of the items it names.
    private func accept(
        _ posts: [SpeechRequest], _ id: RequestID?, reply: ([UtteranceID]) -> ServerMessage.Reply
    ) async {
        var items: [SpeechItem] = []
        do {
            for post in posts { items.append(try await speech.prepare(post, for: client)) }
        } catch {
            await router.send(.failure(for: error, to: id), to: client)
            return
        }
        await router.post(items, replying: .reply(reply(items.map(\.id)), to: id), to: client)
    }

    private func answer(_ request: CheckedRequest) async -> ServerMessage {
        do {
            let reply: ServerMessage.Reply
            switch request.action {
            case .post, .batch:
                preconditionFailure("posts are accepted by accept(_:_:reply:)")
            case .pause(let boundary):
                reply = .control(effective: await speech.pause(.all, at: boundary))
            case .resume:
                reply = .control(effective: await speech.resume(.all))
            case .stop:
                reply = .control(effective: await speech.stop(.all))
            case .status:
                reply = .status(ServerMessage.Status(await speech.status()))
            case .voices:
                reply = .voices(await speech.voices())
            case .subscribe(let all):
                if all { await router.subscribe(client) }
                reply = .done
            case .pronounce(let post):
                reply = .pronunciation(ipa: try await speech.pronounce(post))
            case .render(let post):
                reply = .audio(try await speech.render(post))
            case .lexicon(let change):
                reply = .lexicon(try await speech.lexicon(change))
            }
            return .reply(reply, to: request.id)
        } catch {
            return .failure(for: error, to: request.id)
        }
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\n")
    }
}
