import A11yCore
import A11yProtocol
import NIOCore

/// Answers the requests of one connection through the speech API.
///
/// Lines that arrived together are applied together: consecutive posts reach the queue in one
/// step, so that, for instance, two page scrolls sent at once always coalesce the same way (unless
/// the client has left hundreds of answers unread: then what was gathered is posted, and reading
/// waits for the client to catch up).
struct JSONLinesConnection: Sendable {
    let client: ClientID
    let speech: any SpeechControl
    let router: ConnectionRouter
    let outbox: ConnectionOutbox

    func handle(_ batch: LineBatch) async {
        var posts: [SpeechItem] = []
        for line in batch.lines where !line.readableBytesView.allSatisfy(Self.isWhitespace) {
            // Backpressure: no more requests are read while this client's answers wait unread.
            if !outbox.hasRoom {
                await post(&posts)
                await outbox.waitForRoom()
            }
            switch LineCodec.decodeRequest(line.readableBytesView) {
            case .failure(let failure):
                await router.send(.failure(failure.error, to: failure.id), to: client)
            case .success(let line):
                if case .post(let post) = line.request {
                    do {
                        let item = try await speech.prepare(try post.speechRequest())
                        await router.expect([item.id], by: client)
                        await router.send(.reply(.posted(item.id), to: line.id), to: client)
                        posts.append(item)
                    } catch {
                        await router.send(.failure(SpeechError(wrapping: error), to: line.id), to: client)
                    }
                    continue
                }
                await post(&posts)
                await router.send(await answer(line), to: client)
            }
        }
        await post(&posts)
        if batch.skippedOverlongLine {
            await router.send(
                .failure(SpeechError(.lineTooLong, "a line exceeded \(LineCodec.maximumLineLength) bytes and was ignored"), to: nil),
                to: client)
        }
    }

    /// Queues the posts gathered so far in one step. Once speech has shut down nothing is queued,
    /// and each item still gets its one `finished`, from here.
    private func post(_ posts: inout [SpeechItem]) async {
        guard !posts.isEmpty else { return }
        defer { posts.removeAll() }
        if await speech.post(posts, from: client) { return }
        for item in posts {
            await router.route(ClientEvent(
                .finished(item.id, text: item.text, reason: .stopped, message: "the daemon is shutting down"), owner: client))
        }
    }

    private func answer(_ line: RequestLine) async -> ServerMessage {
        do {
            let reply: ServerMessage.Reply
            switch line.request {
            case .post:
                preconditionFailure("posts are handled in batches")
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
                reply = .pronunciation(ipa: try await speech.pronounce(try post.speechRequest()))
            case .render(let post):
                reply = .audio(try await speech.render(try post.speechRequest()))
            case .lexicon(let request):
                reply = .lexicon(try await speech.lexicon(try request.change()))
            }
            return .reply(reply, to: line.id)
        } catch {
            return .failure(SpeechError(wrapping: error), to: line.id)
        }
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\n")
    }
}
