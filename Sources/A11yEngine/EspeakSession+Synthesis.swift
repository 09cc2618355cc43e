// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import CEspeakNG

extension EspeakSession {
    /// Renders `request` segment after segment, yielding chunks from the synth callback as
    /// libespeak-ng produces them, then finishes the stream (or fails it).
    func synthesize(
        _ request: Utterance,
        into continuation: SynthesisContext.Continuation,
        cancellation: CancellationFlag
    ) {
        guard let sampleRate else {
            continuation.finish(throwing: SpeechError(.engineFailed, "eSpeak-NG is not initialized"))
            return
        }
        let context = SynthesisContext(
            continuation: continuation, cancellation: cancellation, sampleRate: sampleRate)
        do {
            try withExtendedLifetime(context) {
                let userData = Unmanaged.passUnretained(context).toOpaque()
                for segment in request.segments {
                    if context.isCancelled { break }
                    try selectVoice(segment.voice)
                    let options = segment.options
                    context.gain = setParameters(
                        rate: Self.scaled(request.rate, by: options.rateScale, within: 80...1000),
                        pitch: Self.scaled(request.pitch, by: options.pitchScale, within: 0...100),
                        volume: Self.scaled(request.volume, by: options.volumeScale, within: 0...200))
                    setPunctuation(options.punctuation)
                    if options.pauseBeforeMilliseconds > 0 {
                        context.emitSilence(frames: sampleRate * min(options.pauseBeforeMilliseconds, 60_000) / 1000)
                    }
                    let input: String
                    var positionMap: [Int]?
                    var flags = UInt32(espeakCHARS_UTF8)
                    switch segment.content {
                    case .text(let text) where options.spellOut:
                        // Spelled through eSpeak's SSML reader with every character escaped: the
                        // client's text is still never read as markup. Positions map back through
                        // `positionMap` (eSpeak counts the markup).
                        let spelled = Self.spellOutInput(Self.replacingBengaliDigits(text))
                        input = spelled.input
                        positionMap = spelled.positionMap
                        flags |= UInt32(espeakSSML)
                    case .text(let text):
                        // Plain UTF-8 only: no SSML, no phoneme input, so markup is read literally.
                        (input, positionMap) = Self.breakingLongWords(Self.replacingBengaliDigits(text))
                    case .phonemes(let mnemonics):
                        input = "[[" + mnemonics + "]]"
                        flags |= UInt32(espeakPHONEMES)
                    }
                    context.beginSegment(segment, positionMap: positionMap)
                    if case .text(let text) = segment.content, text.isEmpty {
                        // Nothing to say (an SSML mark or break alone): its mark stands here.
                        context.endSegment()
                        continue
                    }
                    let size = input.utf8.count + 1
                    let status = input.withCString { text in
                        espeak_Synth(
                            text, size, 0, POS_CHARACTER, 0, flags, nil, userData)
                    }
                    phonemeInput = (flags & UInt32(espeakPHONEMES)) != 0
                    guard status == EE_OK else {
                        throw SpeechError(.engineFailed, "espeak_Synth failed (\(status.rawValue))")
                    }
                    context.endSegment()
                }
            }
            setPunctuation(false)
            context.finish()
        } catch {
            setPunctuation(false)
            continuation.finish(throwing: error)
        }
    }
}

extension EspeakSession {
    /// `value × scale`, rounded and clamped to `range` while still a Double, so that no setting
    /// (huge, negative) and no scale (infinite, NaN) can trap on its way to an Int; a NaN product
    /// keeps the unscaled value.
    static func scaled(_ value: Int, by scale: Double, within range: ClosedRange<Int>) -> Int {
        let product = Double(value) * scale
        guard !product.isNaN else { return min(max(value, range.lowerBound), range.upperBound) }
        return Int(min(max(product, Double(range.lowerBound)), Double(range.upperBound)).rounded())
    }

    func setPunctuation(_ all: Bool) {
        espeak_SetParameter(espeakPUNCTUATION, Int32(all ? espeakPUNCT_ALL.rawValue : espeakPUNCT_NONE.rawValue), 0)
    }

    /// `text` with each Bengali digit (U+09E6…U+09EF) replaced by the ASCII digit of the same value,
    /// which every voice reads as the same number in its own language. One scalar for one, so
    /// positions are unchanged.
    ///
    /// libespeak-ng 1.51 reads freed memory when it speaks a Bengali digit, in every voice (a
    /// heap-use-after-free under AddressSanitizer; found by fuzz-render). The other scripts' digits
    /// tried (Devanagari, Arabic-Indic, Thai, Lao, Myanmar, NKo, fullwidth) are read safely.
    static func replacingBengaliDigits(_ text: String) -> String {
        guard mayHoldBengaliDigits(text) else { return text }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if (0x09E6...0x09EF).contains(scalar.value), let digit = Unicode.Scalar(scalar.value - 0x09E6 + 0x30) {
                result.append(digit)
            } else {
                result.append(scalar)
            }
        }
        return String(result)
    }

    /// The most UTF-8 bytes eSpeak is given without a space: no word of any language comes near it.
    static let maximumWordBytes = 100

    /// `text` with a space inserted into every run without whitespace each `maximumWordBytes` bytes,
    /// and, when one was, for each code point of the result the offset in `text` it stands for.
    ///
    /// eSpeak-NG 1.51 writes past a stack buffer on a word of more than about 160 bytes after some
    /// contexts ("a.b. " then 165 letters, in every voice: "stack smashing detected" and the process
    /// aborts; upstream limits word lengths since 1.52). In process, that would be a dead daemon.
    static func breakingLongWords(_ text: String) -> (input: String, positionMap: [Int]?) {
        guard mayHoldLongWord(text) else { return (text, nil) }
        var input = String.UnicodeScalarView()
        var map: [Int] = []
        var run = 0
        var broken = false
        for (offset, scalar) in text.unicodeScalars.enumerated() {
            if scalar.properties.isWhitespace {
                run = 0
            } else {
                let size = UTF8.width(scalar)
                if run + size > maximumWordBytes {
                    input.append(" ")
                    map.append(offset)
                    run = 0
                    broken = true
                }
                run += size
            }
            input.append(scalar)
            map.append(offset)
        }
        return broken ? (String(input), map) : (text, nil)
    }

    // The two checks below read the UTF-8 bytes once, without decoding: a text of 200 KB is looked
    // at before eSpeak starts on it, and decoding every scalar of it cost more than its first sound.

    /// Whether some run of more than `maximumWordBytes` bytes has no ASCII space, tab or line
    /// break: only then may a word be too long (the scalar pass decides, as other spaces count too).
    static func mayHoldLongWord(_ text: String) -> Bool {
        guard text.utf8.count > maximumWordBytes else { return false }
        func scan(_ bytes: some Sequence<UInt8>) -> Bool {
            var run = 0
            for byte in bytes {
                if byte == 0x20 || (0x09...0x0D).contains(byte) {
                    run = 0
                } else {
                    run += 1
                    if run > maximumWordBytes { return true }
                }
            }
            return false
        }
        return text.utf8.withContiguousStorageIfAvailable { scan($0) } ?? scan(text.utf8)
    }

    /// Whether `text` may hold a Bengali digit: U+09E6…U+09EF are E0 A7 A6…AF in UTF-8.
    static func mayHoldBengaliDigits(_ text: String) -> Bool {
        func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            var index = 0
            while index + 2 < bytes.count {
                if bytes[index] == 0xE0, bytes[index + 1] == 0xA7, (0xA6...0xAF).contains(bytes[index + 2]) { return true }
                index += 1
            }
            return false
        }
        return text.utf8.withContiguousStorageIfAvailable(scan)
            ?? text.unicodeScalars.contains { (0x09E6...0x09EF).contains($0.value) }
    }

    /// `text` inside `<speak><say-as interpret-as="characters">…</say-as></speak>`, each of `<`, `>`,
    /// `&`, `"`, `'` escaped, and for each code point of the result (eSpeak's 1-based
    /// `text_position` minus one) the offset in `text`, in Unicode scalars, it stands for.
    static func spellOutInput(_ text: String) -> (input: String, positionMap: [Int]) {
        let open = "<speak><say-as interpret-as=\"characters\">"
        let close = "</say-as></speak>"
        var input = open
        var map = Array(repeating: 0, count: open.unicodeScalars.count)
        for (offset, scalar) in text.unicodeScalars.enumerated() {
            let piece: String
            switch scalar {
            case "<": piece = "&lt;"
            case ">": piece = "&gt;"
            case "&": piece = "&amp;"
            case "\"": piece = "&quot;"
            case "'": piece = "&apos;"
            default: piece = String(scalar)
            }
            input += piece
            map += Array(repeating: offset, count: piece.unicodeScalars.count)
        }
        input += close
        map += Array(repeating: text.unicodeScalars.count, count: close.unicodeScalars.count)
        return (input, map)
    }
}
