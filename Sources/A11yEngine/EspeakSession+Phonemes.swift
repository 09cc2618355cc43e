// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11ySystem
import CEspeakNG

extension EspeakSession {
    /// libespeak-ng reads `[[…]]` in `espeak_TextToPhonemes` only while its global "phoneme input"
    /// option is on, and that option is set by the flags of the last `espeak_Synth`. This makes
    /// it what `on` asks by synthesizing a tiny silent input (its audio is dropped: no `user_data`).
    func setPhonemeInput(_ on: Bool) {
        if phonemeInput == on { return }
        var flags = UInt32(espeakCHARS_UTF8)
        if on { flags |= UInt32(espeakPHONEMES) }
        let input = on ? "[[_:]]" : "_"
        _ = input.withCString { espeak_Synth($0, input.utf8.count + 1, 0, POS_CHARACTER, 0, flags, nil, nil) }
        phonemeInput = on
    }

    /// `espeak_TextToPhonemes` with every option: IPA or mnemonics, an optional separator between
    /// phonemes, and whether `[[…]]` in `text` is phoneme input. Clauses are joined by spaces.
    func textToPhonemes(
        _ text: String, voice: String, ipa: Bool, separator: Unicode.Scalar?, phonemeInput: Bool
    ) throws -> String {
        try requireInitialized()
        try selectVoice(voice)
        setPhonemeInput(phonemeInput)
        var mode = Int32(ipa ? 0x02 : 0)
        if let separator { mode |= Int32(separator.value) << 8 }
        discardWhatASynthesisLeft(mode: mode)
        var pieces: [String] = []
        text.withCString { cText in
            var pointer: UnsafeRawPointer? = UnsafeRawPointer(cText)
            while pointer != nil {
                guard let out = espeak_TextToPhonemes(&pointer, espeakCHARS_UTF8, mode) else { break }
                let piece = String(cString: out).trimmingSpaces()
                if !piece.isEmpty { pieces.append(piece) }
            }
        }
        return pieces.joined(separator: " ")
    }

    /// eSpeak's text reader keeps state between calls that `espeak_TextToPhonemes`, unlike a
    /// synthesis, does not reset: the punctuation setting of the last segment said, and the
    /// character a synthesis read past and put back (the "!" ending a sentence, a liaison's next
    /// word when it was cancelled). The text asked for would then be read after it ("point
    /// d'exclamation bonjour", "zbonjour"). Punctuation is set to none and an empty text is read
    /// first, which takes what was put back.
    private func discardWhatASynthesisLeft(mode: Int32) {
        setPunctuation(false)
        "".withCString { empty in
            var pointer: UnsafeRawPointer? = UnsafeRawPointer(empty)
            _ = espeak_TextToPhonemes(&pointer, espeakCHARS_UTF8, mode)
        }
    }

    /// Every phoneme mnemonic of every table in `phontab` (eSpeak's compiled phoneme tables).
    func allMnemonics() throws -> [String] {
        try requireInitialized()
        if let mnemonicList { return mnemonicList }
        let list = try Self.mnemonics(inPhontabAt: dataPathInUse() + "/phontab")
        mnemonicList = list
        return list
    }

    /// The mnemonics of the `phontab` file at `path`; a missing or unreadable file is the engine's failure.
    static func mnemonics(inPhontabAt path: String) throws -> [String] {
        // 56 KB in eSpeak-NG 1.51; the limit only guards against a wrong path.
        guard let bytes = try? TextFile.bytes(path, limit: 16 << 20) else {
            throw SpeechError(.engineFailed, "cannot read eSpeak phoneme tables at \(path)")
        }
        return parsePhontab(bytes)
    }

    /// The layout of `phontab` (espeak-ng synthdata.c, `LoadPhData`): a count of tables (byte 0,
    /// 4 bytes); per table: phoneme count (1 byte), parent index (1 byte), 2 bytes, a 32-byte name,
    /// then 16-byte `PHONEME_TAB` records whose first 4 bytes are the mnemonic (NUL padded).
    static func parsePhontab(_ bytes: [UInt8]) -> [String] {
        guard bytes.count >= 4 else { return [] }
        var seen = Set<String>()
        var result: [String] = []
        let tables = Int(bytes[0])
        var p = 4
        for _ in 0..<tables {
            guard p + 36 <= bytes.count else { break }
            let count = Int(bytes[p])
            p += 36
            for j in 0..<count {
                let at = p + 16 * j
                guard at + 4 <= bytes.count else { break }
                let raw = bytes[at..<at + 4].prefix { $0 != 0 }
                guard !raw.isEmpty, raw.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else { continue }
                let name = String(decoding: raw, as: UTF8.self)
                if seen.insert(name).inserted { result.append(name) }
            }
            p += 16 * count
        }
        return result
    }

    private func dataPathInUse() -> String {
        var info: UnsafePointer<CChar>?
        _ = espeak_Info(&info)
        let base = info.map { String(cString: $0) } ?? "/usr/lib/x86_64-linux-gnu/espeak-ng-data"
        return base
    }

    /// The phonemes `voice` knows: each mnemonic that the voice parses as exactly one phoneme,
    /// with the IPA eSpeak gives it (mode 0 and mode 2 of the same input, aligned one to one by a
    /// separator). The IPA is read in the frame `[[t|m|t]]` (so a lone vowel is not treated as a
    /// word-final one); `stable` tells whether eSpeak keeps the phoneme as is between vowels
    /// (`[[a|m|a]]`: no substitution such as English t → flap, no inserted phoneme).
    func phonemeInventory(voice: String) throws -> [PhonemeEntry] {
        func pieces(_ input: String, ipa: Bool) throws -> [String] {
            try textToPhonemes(input, voice: voice, ipa: ipa, separator: "_", phonemeInput: true)
                .split(separator: "_", omittingEmptySubsequences: true)
                .map { String($0.filter { $0 != "'" && $0 != "," && $0 != "ˈ" && $0 != "ˌ" }) }
                .filter { !$0.isEmpty }
        }
        var entries: [PhonemeEntry] = []
        for mnemonic in try allMnemonics() {
            // Pauses, stress and boundary codes are not sounds.
            if mnemonic.hasPrefix("_") || mnemonic == "||" || mnemonic == "|" || mnemonic.contains("'") || mnemonic.contains(",") { continue }
            let alone = try pieces("[[" + mnemonic + "]]", ipa: false) == [mnemonic]
            let framedParse = try pieces("[[t|" + mnemonic + "|t]]", ipa: false) == ["t", mnemonic, "t"]
            // Between vowels too: German devoices b, d, g, z before t (final devoicing).
            let voicedParse = try pieces("[[a|" + mnemonic + "|a]]", ipa: false) == ["a", mnemonic, "a"]
            // Stressed: vowels some voices only keep under stress (Italian ɛ ɔ, German ʏ).
            let stressedParse = try pieces("[[t|'" + mnemonic + "|t]]", ipa: false) == ["t", mnemonic, "t"]
            guard alone || framedParse || voicedParse || stressedParse else { continue }
            if !alone && !framedParse && !voicedParse {
                let framed = try pieces("[[t|'" + mnemonic + "|t]]", ipa: true)
                guard framed.count == 3 else { continue }
                entries.append(PhonemeEntry(mnemonic: mnemonic, ipa: framed[1], stable: false))
                continue
            }
            var ipa = alone ? try pieces("[[" + mnemonic + "]]", ipa: true) : []
            if voicedParse {
                let framed = try pieces("[[a|" + mnemonic + "|a]]", ipa: true)
                if framed.count == 3 { ipa = [framed[1]] }
            }
            if framedParse && !voicedParse {
                let framed = try pieces("[[t|" + mnemonic + "|t]]", ipa: true)
                if framed.count == 3 { ipa = [framed[1]] }
            }
            guard ipa.count == 1, !ipa[0].contains(" ") else { continue }
            let stable = voicedParse
            entries.append(PhonemeEntry(mnemonic: mnemonic, ipa: ipa[0], stable: stable))
        }
        return entries
    }
}

extension String {
    fileprivate func trimmingSpaces() -> String {
        var s = Substring(self)
        while let c = s.first, c.isWhitespace { s.removeFirst() }
        while let c = s.last, c.isWhitespace { s.removeLast() }
        return String(s)
    }
}

extension EspeakSession {
    /// The IPA of a character's name in `voice`: eSpeak's letter-name rules are reached by the
    /// `_` prefix that its dictionaries use for letter names ("_a"), else the character itself.
    func letterIPA(_ character: String, voice: String) throws -> String {
        let named = try textToPhonemes("_" + character, voice: voice, ipa: true, separator: nil, phonemeInput: false)
        if !named.isEmpty { return named }
        return try textToPhonemes(character, voice: voice, ipa: true, separator: nil, phonemeInput: false)
    }
}
