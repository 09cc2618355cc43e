// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yEngine

/// A worker's question answered by eSpeak: the one place a `WorkerQuestion` becomes eSpeak's calls,
/// whether eSpeak runs in the worker (`EngineWorkerProcess`) or in a11yd's own process
/// (`WorkerEngine+InProcess.swift`). It waits for eSpeak's thread to answer, so it runs on a thread
/// that may block: the worker's main thread, or a thread of NIO's blocking pool in a11yd.
extension EspeakEngine {
    func answerWaiting(_ question: WorkerQuestion) throws -> WorkerAnswer {
        switch question {
        case .voices: .voices(try voiceEntriesWaiting())
        case .ipaOfText(let text, let voice): .text(try ipaWaiting(ofText: text, voice: voice))
        case .ipaOfMnemonics(let mnemonics, let voice): .text(try ipaWaiting(ofMnemonics: mnemonics, voice: voice))
        case .ipaOfLetter(let character, let voice): .text(try ipaWaiting(ofLetter: character, voice: voice))
        case .phonemeInventory(let voice): .phonemes(try phonemeInventoryWaiting(voice: voice))
        case .allMnemonics: .names(try allMnemonicsWaiting())
        }
    }
}
