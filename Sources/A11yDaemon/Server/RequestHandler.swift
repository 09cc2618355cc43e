import A11yCore
import A11yProtocol
import Foundation
import Logging

/// Answers the lines of one connection. Lines that arrived together are applied together:
/// consecutive posts reach the queue in one step, so that, for instance, two page scrolls sent
/// at once always coalesce the same way.
struct RequestHandler: Sendable {
    let speech: SpeechService
    let connection: EventRouter.ConnectionID
    let logger: Logger

    private var router: EventRouter { speech.router }
    private var coordinator: SpeechCoordinator { speech.coordinator }

    func handle(lines: [Substring]) async {
        var posts: [SpeechItem] = []
        for line in lines where !line.allSatisfy(\.isWhitespace) {
            let request: ClientRequest
            do {
                request = try LineCodec.decodeRequest(line)
            } catch {
                await router.send(.failure(error, id: LineCodec.requestID(in: line)), to: connection)
                continue
            }
            if request.op == .post {
                do {
                    let item = try await speech.makeItem(request)
                    await router.own(item.id, by: connection)
                    var reply = ServerMessage.reply(to: request.id)
                    reply.utterance = item.id.rawValue
                    await router.send(reply, to: connection)
                    posts.append(item)
                } catch {
                    await router.send(.failure(Self.speechError(error), id: request.id), to: connection)
                }
                continue
            }
            if !posts.isEmpty {
                await coordinator.post(posts)
                posts.removeAll()
            }
            await router.send(await control(request), to: connection)
        }
        if !posts.isEmpty { await coordinator.post(posts) }
    }

    private func control(_ request: ClientRequest) async -> ServerMessage {
        var reply = ServerMessage.reply(to: request.id)
        switch request.op {
        case .post:
            break
        case .pronounce:
            do {
                reply.ipa = try await speech.pronunciation(of: request)
            } catch {
                return .failure(Self.speechError(error), id: request.id)
            }
        case .render:
            do {
                let (format, samples) = try await speech.render(request)
                reply.sampleRate = format.sampleRate
                reply.channels = format.channels
                reply.pcm = samples.withUnsafeBytes { Data($0) }.base64EncodedString()
            } catch {
                return .failure(Self.speechError(error), id: request.id)
            }
        case .pause:
            reply.effective = await coordinator.pause(at: request.at ?? .immediate)
        case .resume:
            reply.effective = await coordinator.resume()
        case .stop:
            reply.effective = await coordinator.stop()
        case .status:
            let status = await coordinator.status()
            reply.state = status.state.rawValue
            reply.current = status.current.map(ServerMessage.ItemSummary.init)
            reply.queue = status.pending.map(ServerMessage.ItemSummary.init)
            reply.version = 1
        case .voices:
            reply.voices = await speech.engine.voices()
        case .subscribe:
            if request.all ?? true { await router.subscribe(connection) }
        }
        return reply
    }

    static func speechError(_ error: any Error) -> SpeechError {
        (error as? SpeechError) ?? SpeechError(.internal, "\(error)")
    }
}
