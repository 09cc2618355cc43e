// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yEngine

/// A worker's question answered by eSpeak in the worker (`EngineWorkerProcess`): the one place a
/// `WorkerQuestion` becomes eSpeak's calls. It waits for eSpeak's thread to answer, so it runs on the
/// worker's main thread, which may block. (eSpeak in a11yd's own process is asked through its
/// `PronunciationEngine` methods, which wait for nothing.)
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
