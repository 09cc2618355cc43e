// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yEngine
import Logging
import NIOPosix
import Synchronization

/// eSpeak in a11yd's own process: only when `WorkerLaunch.inProcess` allows it (never for Piper) and
/// the supervisor's state is `inProcess` (`A11YD_ENGINE_IN_PROCESS=1`, or no worker could start).
/// The log says so each time that state is entered. The one file of the engine link that knows eSpeak.
extension WorkerEngine {
    /// eSpeak loaded into a11yd the first time a request is served in process, then kept.
    final class InProcessEngine: Sendable {
        private let logger: Logger
        private let made = Mutex<Result<EspeakEngine, SpeechError>?>(nil)

        init(logger: Logger) {
            self.logger = logger
        }

        /// eSpeak, made the first time it is needed (a failure is kept too: it would fail again).
        private func engine() -> Result<EspeakEngine, SpeechError> {
            made.withLock { made in
                if let made { return made }
                let engine: Result<EspeakEngine, SpeechError>
                do {
                    engine = .success(try EspeakEngine(logger: logger))
                } catch {
                    engine = .failure(SpeechError(.engineFailed, "no engine worker can start, nor eSpeak-NG in process (\(error))"))
                }
                made = engine
                return engine
            }
        }

        func format() throws(SpeechError) -> AudioFormat {
            try engine().get().format
        }

        /// Serves `work` as the worker would, in a11yd's process; `sampleRate`, the workers' (if one
        /// was ready), which the in-process engine must write at too.
        func serve(_ work: Work, sampleRate: Int?) {
            let engine = engine().flatMap { engine -> Result<EspeakEngine, SpeechError> in
                guard let sampleRate, engine.format.sampleRate != sampleRate else { return .success(engine) }
                return .failure(SpeechError(.engineFailed, "the in-process engine's sample rate \(engine.format.sampleRate) is not the worker's \(sampleRate)"))
            }
            switch (work, engine) {
            case (.synthesis(let job), .success(let engine)):
                engine.synthesize(job.request, into: job.sink, cancellation: job.cancellation)
            case (.question(let question), .success(let engine)):
                // Answered as the worker answers, waiting for eSpeak's thread: on NIO's pool for
                // blocking work, not on the link's loop nor a thread of Swift's cooperative pool.
                Task {
                    let answer: Result<WorkerAnswer, SpeechError>
                    do {
                        answer = .success(try await NIOThreadPool.singleton.runIfActive { try engine.answerWaiting(question.question) })
                    } catch {
                        answer = .failure((error as? SpeechError) ?? SpeechError(.engineFailed, "\(error)"))
                    }
                    question.reply(answer)
                }
            case (_, .failure(let error)):
                work.fail(error)
            }
        }
    }
}
