// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yEngine
import Logging
import NIOPosix

/// eSpeak in a11yd's own process: only when `WorkerLaunch.inProcess` allows it (never for Piper) and
/// the supervision's state is `inProcess` (`A11YD_ENGINE_IN_PROCESS=1`, or no worker could start).
/// The log says so each time that state is entered. The one file of `WorkerEngine` that knows eSpeak.
extension WorkerEngine {
    /// eSpeak loaded into a11yd: what `WorkerEngine.inProcessEngine` holds.
    struct InProcessEngine: Sendable {
        let espeak: EspeakEngine
    }

    /// The engine in process from the start: no worker, no link thread.
    static func inProcessFromTheStart(_ launch: WorkerLaunch, logger: Logger) async throws -> WorkerEngine {
        let espeak = try makeInProcessEngine(logger: logger)
        var inProcess = launch
        inProcess.inProcess = .always
        let engine = try WorkerEngine(launch: inProcess, format: espeak.format, catalog: VoiceCatalog(try await espeak.voiceEntries()), logger: logger)
        engine.inProcessEngine.withLock { $0 = InProcessEngine(espeak: espeak) }
        return engine
    }

    /// eSpeak loaded into a11yd: the one place it is made, from the start or once no worker can start.
    private static func makeInProcessEngine(logger: Logger) throws(WorkerFailure) -> EspeakEngine {
        do {
            return try EspeakEngine(logger: logger)
        } catch {
            throw WorkerFailure("cannot start eSpeak-NG: \(error)")
        }
    }

    /// The in-process engine, made the first time it is needed.
    private func madeInProcessEngine() -> Result<EspeakEngine, SpeechError> {
        inProcessEngine.withLock { engine in
            if let engine { return .success(engine.espeak) }
            do throws(WorkerFailure) {
                let made = try Self.makeInProcessEngine(logger: logger)
                guard made.format == format else {
                    return .failure(SpeechError(.engineFailed, "the in-process engine's format \(made.format) is not the worker's \(format)"))
                }
                engine = InProcessEngine(espeak: made)
                return .success(made)
            } catch {
                return .failure(SpeechError(.engineFailed, "no engine worker can start, nor eSpeak-NG in process (\(error))"))
            }
        }
    }

    func doInProcess(_ work: Work) {
        switch (work, madeInProcessEngine()) {
        case (.synthesis(let job), .success(let engine)):
            engine.synthesize(job.request, into: job.sink, cancellation: job.cancellation)
        case (.question(let question), .success(let engine)):
            // Answered as the worker answers, waiting for eSpeak's thread: on NIO's pool for blocking
            // work, not on a thread of Swift's cooperative pool.
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
