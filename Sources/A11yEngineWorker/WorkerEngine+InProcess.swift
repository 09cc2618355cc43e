// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yEngine
import Logging

/// eSpeak in a11yd's own process: only when `WorkerLaunch.inProcess` allows it (never for Piper) and
/// the supervision's state is `inProcess` (`A11YD_ENGINE_IN_PROCESS=1`, or no worker could start).
/// The log says so each time that state is entered.
extension WorkerEngine {
    /// The engine in process from the start: no worker, no link thread.
    static func inProcessFromTheStart(_ launch: WorkerLaunch, logger: Logger) async throws -> WorkerEngine {
        let espeak: EspeakEngine
        do {
            espeak = try EspeakEngine(logger: logger)
        } catch {
            throw WorkerFailure("cannot start eSpeak-NG: \(error)")
        }
        var inProcess = launch
        inProcess.inProcess = .always
        let engine = try WorkerEngine(launch: inProcess, format: espeak.format, catalog: VoiceCatalog(try await espeak.voiceEntries()), logger: logger)
        engine.inProcessEngine.withLock { $0 = espeak }
        return engine
    }

    /// The in-process engine, made the first time it is needed (eSpeak is then loaded into a11yd).
    private func madeInProcessEngine() -> Result<EspeakEngine, SpeechError> {
        inProcessEngine.withLock { engine in
            if let engine { return .success(engine) }
            do {
                let made = try EspeakEngine(logger: logger)
                guard made.format == format else {
                    return .failure(SpeechError(.engineFailed, "the in-process engine's format \(made.format) is not the worker's \(format)"))
                }
                engine = made
                return .success(made)
            } catch {
                return .failure(SpeechError(.engineFailed, "no engine worker can start, nor eSpeak-NG in process: \(error)"))
            }
        }
    }

    func doInProcess(_ work: Work) {
        switch (work, madeInProcessEngine()) {
        case (.synthesis(let job), .success(let engine)):
            engine.synthesize(job.request, into: job.sink, cancellation: job.cancellation)
        case (.question(let question), .success(let engine)):
            Task { question.reply(await Self.answer(question.question, by: engine)) }
        case (_, .failure(let error)):
            work.fail(error)
        }
    }

    /// What a worker would answer, from the in-process engine.
    private static func answer(_ question: WorkerQuestion, by engine: EspeakEngine) async -> Result<WorkerAnswer, SpeechError> {
        do {
            switch question {
            case .voices: return .success(.voices(try await engine.voiceEntries()))
            case .ipaOfText(let text, let voice): return .success(.text(try await engine.ipa(ofText: text, voice: voice)))
            case .ipaOfMnemonics(let mnemonics, let voice): return .success(.text(try await engine.ipa(ofMnemonics: mnemonics, voice: voice)))
            case .ipaOfLetter(let character, let voice): return .success(.text(try await engine.ipa(ofLetter: character, voice: voice)))
            case .phonemeInventory(let voice): return .success(.phonemes(try await engine.phonemeInventory(voice: voice)))
            case .allMnemonics: return .success(.names(try await engine.allMnemonics()))
            }
        } catch {
            return .failure((error as? SpeechError) ?? SpeechError(.engineFailed, "\(error)"))
        }
    }
}
