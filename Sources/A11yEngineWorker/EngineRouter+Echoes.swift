// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import Synchronization

/// Echoes said ahead in the natural voice (`EchoMemory`): once a Piper voice is used at a rate, pitch
/// and volume, every character a screen reader echoes is rendered at them, one at a time, only while
/// the voice says nothing else, and an echo asked for is then replayed at once.
///
/// The rendering yields to speech: it waits until no Piper synthesis is under way before each
/// character, and one that starts meanwhile cancels the character being rendered (rendered again
/// later). Settings used anew replace those being rendered.
extension EngineRouter {
    /// Where the rendering stands.
    struct EchoRendering: Sendable {
        /// The settings being rendered, and the task doing it.
        var settings: EchoMemory.Settings?
        var task: Task<Void, Never>?
        /// The character being rendered, cancelled by speech that starts meanwhile.
        var current: Task<[SynthesisChunk]?, Never>?
        /// Piper syntheses under way (their streams not yet let go).
        var speaking = 0
        /// The rendering waiting for them to end.
        var waiting: CheckedContinuation<Void, Never>?
    }

    /// Whether `voice` is one whose echoes are said ahead: a natural voice, its runtime in use.
    func saysEchoesAhead(_ voice: String) -> Bool {
        echoesAhead && SpeechEngineName(voice: voice) == .piper && piper.withLock { $0 != nil }
    }

    /// The settings `request` is said at, when in a voice whose echoes are said ahead.
    func echoSettings(of request: Utterance) -> EchoMemory.Settings? {
        guard let voice = request.segments.first?.voice, saysEchoesAhead(voice) else { return nil }
        return EchoMemory.Settings(voice: voice, rate: request.rate, pitch: request.pitch, volume: request.volume)
    }

    /// Starts rendering the echoes at `settings` unless they are being rendered already.
    func renderEchoes(at settings: EchoMemory.Settings) {
        let previous: Task<Void, Never>? = echoRendering.withLock { rendering in
            guard rendering.settings != settings else { return nil }
            let previous = rendering.task
            rendering.current?.cancel()
            rendering.settings = settings
            rendering.task = Task.detached(priority: .background) { [weak self] in
                await self?.renderEchoLoop(settings)
            }
            return previous
        }
        previous?.cancel()
    }

    /// Renders every form at `settings` not kept yet, until all are or the task is cancelled.
    private func renderEchoLoop(_ settings: EchoMemory.Settings) async {
        var rendered = false
        while !Task.isCancelled, let step = echoes.withLock({ $0.nextToRender(for: settings) }) {
            await untilNoSpeech()
            guard !Task.isCancelled else { return }
            let utterance = EchoMemory.utterance(step.form, step.settings)
            let render = Task { [self] () -> [SynthesisChunk]? in
                var chunks: [SynthesisChunk] = []
                do {
                    for try await chunk in routed(utterance) { chunks.append(chunk) }
                } catch {
                    return Task.isCancelled ? nil : []
                }
                return Task.isCancelled ? nil : chunks
            }
            let started = echoRendering.withLock { rendering -> Bool in
                // Speech that began while this one was made waits for nothing: the render is dropped.
                guard rendering.speaking == 0 else { return false }
                rendering.current = render
                return true
            }
            if !started { render.cancel() }
            let chunks = await render.value
            echoRendering.withLock { if $0.current == render { $0.current = nil } }
            switch chunks {
            case nil: continue  // cut short by speech: rendered again once it ends
            case let chunks? where chunks.isEmpty: echoes.withLock { $0.passOver(step.form, at: step.settings) }
            case let chunks?: echoes.withLock { $0.remember(chunks, for: step.form, at: step.settings) }
            }
            rendered = true
        }
        guard !Task.isCancelled else { return }
        if rendered {
            let (forms, bytes, all, bound) = echoes.withLock { ($0.renderedInOrder, $0.bytes(for: settings), $0.bytes, $0.limits.bytes) }
            logger.info(
                "the characters a screen reader echoes are ready in \(settings.voice) at rate \(settings.rate), pitch \(settings.pitch), volume \(settings.volume)",
                metadata: ["forms": "\(forms)", "bytes": "\(bytes)", "echoes_bytes": "\(all)", "echoes_bound": "\(bound)"])
        }
        echoRendering.withLock { if $0.settings == settings { $0.settings = nil; $0.task = nil } }
    }

    /// Returns once no Piper synthesis is under way.
    private func untilNoSpeech() async {
        await withCheckedContinuation { (waiting: CheckedContinuation<Void, Never>) in
            let now = echoRendering.withLock { rendering -> Bool in
                guard rendering.speaking > 0 else { return true }
                rendering.waiting?.resume()
                rendering.waiting = waiting
                return false
            }
            if now { waiting.resume() }
        }
    }

    /// `stream`, counted as Piper speech for as long as it is held: the echo being rendered is cut
    /// short, and the next waits for it to be let go.
    func countedAsSpeech(_ stream: Chunks) -> Chunks {
        let current = echoRendering.withLock { rendering -> Task<[SynthesisChunk]?, Never>? in
            rendering.speaking += 1
            defer { rendering.current = nil }
            return rendering.current
        }
        current?.cancel()
        let held = SpeechHeld(stream.makeAsyncIterator(), router: self)
        return AsyncThrowingStream { try await held.next() }
    }

    /// A counted stream let go: when it was the last, the rendering may go on.
    fileprivate func speechEnded() {
        let waiting = echoRendering.withLock { rendering -> CheckedContinuation<Void, Never>? in
            rendering.speaking -= 1
            guard rendering.speaking == 0 else { return nil }
            defer { rendering.waiting = nil }
            return rendering.waiting
        }
        waiting?.resume()
    }

    /// Returns once the echoes being rendered are (at once when none are): for tests and the bench,
    /// which measure an echo the first time it is asked for.
    public func echoesRendered() async {
        await echoRendering.withLock { $0.task }?.value
    }

    /// How many echo forms are rendered for the settings rendered for last, in order (`EchoMemory.steps`).
    public var echoFormsRendered: Int { echoes.withLock { $0.renderedInOrder } }

    /// The bytes of audio the echoes said ahead take now (within `EchoMemory.Limits`).
    public var echoBytes: Int { echoes.withLock { $0.bytes } }

    /// Stops rendering and forgets what was rendered (a reload: a model may have changed).
    func forgetEchoes() {
        let task = echoRendering.withLock { rendering -> Task<Void, Never>? in
            rendering.current?.cancel()
            rendering.settings = nil
            defer { rendering.task = nil }
            return rendering.task
        }
        task?.cancel()
        echoes.withLock { $0.forgetAll() }
    }
}

/// A Piper stream counted as speech until it is let go (the stream's closure, which holds this, is
/// released with it however it ended: finished, failed, or dropped by its consumer).
///
/// `@unchecked Sendable`: only the closure of one `AsyncThrowingStream(unfolding:)` uses the
/// iterator, and that stream calls its closure for one `next()` at a time, never two at once.
private final class SpeechHeld: @unchecked Sendable {
    private var iterator: EngineRouter.Chunks.AsyncIterator
    private let router: EngineRouter

    init(_ iterator: EngineRouter.Chunks.AsyncIterator, router: EngineRouter) {
        self.iterator = iterator
        self.router = router
    }

    func next() async throws -> SynthesisChunk? { try await iterator.next() }

    deinit { router.speechEnded() }
}
