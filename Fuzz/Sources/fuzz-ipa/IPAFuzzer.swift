// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yEngine
import A11yPronunciation
import FuzzSupport
import Logging

/// The IPA converter with the real voices' tables (learnt from libespeak-ng at start-up): the first
/// byte picks the voice, the rest is the client's IPA. What it converts is then read back by eSpeak
/// itself as `[[…]]` phoneme input, as a span would be spoken.
///
/// Invariants: a refusal is `invalid_ipa` with a message, and a position it names lies inside the
/// input; a conversion is non-empty, printable ASCII, and cannot close or reopen `[[…]]`.
@main enum Fuzzer {
    static func main() { runFuzzer(fuzzIPA) }
}

func fuzzIPA(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let converter = converters[Int(input.byte()) % converters.count]
    let ipa = input.restAsString()
    let mnemonics: String
    do {
        mnemonics = try converter.mnemonics(forIPA: ipa)
    } catch let error as SpeechError {
        require(error.code == .invalidIPA, "refused with \(error.code)")
        require(!error.message.isEmpty, "a refusal without a message")
        if let position = namedPosition(error.message) {
            require(position >= 0 && position < ipa.unicodeScalars.count, "position \(position) outside '\(ipa)': \(error.message)")
        }
        return 0
    } catch {
        require(false, "threw a non-SpeechError: \(error)")
        return 0
    }
    require(!mnemonics.isEmpty, "an empty conversion")
    require(mnemonics.utf8.allSatisfy { (0x20..<0x7F).contains($0) }, "not printable ASCII: \(Array(mnemonics.unicodeScalars))")
    require(!mnemonics.contains("]]") && !mnemonics.contains("[["), "mnemonics break out of [[…]]: \(mnemonics)")
    let spoken = blocking { try? await engine.ipa(ofMnemonics: mnemonics, voice: converter.voice) }
    require(spoken != nil, "eSpeak failed on the mnemonics \(mnemonics)")
    return 0
}

/// "… at position 12" → 12.
func namedPosition(_ message: String) -> Int? {
    guard let range = message.firstRange(of: "at position ") else { return nil }
    return Int(message[range.upperBound...].prefix { $0.isNumber })
}

let engine = try! EspeakEngine(logger: Logger(label: "a11yd.fuzz"))

/// Voices whose languages have their own rules (aliases, default stress) and one with none.
let converters: [IPAConverter] = blocking {
    let pronouncer = Pronouncer(engine: engine)
    var result: [IPAConverter] = []
    for voice in ["fr", "en-us", "en", "de", "nl", "cs", "sv", "pt", "es", "ru", "pl", "ja"] {
        if let converter = try? await pronouncer.converter(voice: voice) { result.append(converter) }
    }
    return result
}
