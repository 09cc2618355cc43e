// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

/// How a piece of SSML text is read: what the elements around it say.
struct SSMLStyle: Equatable {
    var voice: String
    /// Under an element that names a language (`<lang>`, `<voice>`, `xml:lang` below `<speak>`).
    var languageStated = false
    var spellOut = false
    var rateScale = 1.0
    var pitchScale = 1.0
    var volumeScale = 1.0
}

/// Accumulates the plan of an SSML document in document order: the spoken text (whitespace
/// collapsed as XML text is read, tags removed), the segments pointing into it, the pauses and
/// marks that precede segments.
///
/// Adjacent text in the same style becomes one segment (one `espeak_Synth` call, so no extra
/// clause pause); a style change, `p`/`s`, `break`, `mark` or `phoneme` starts a new one.
/// A space between two segments belongs to neither. A `break` or `mark` with no text after it
/// (or two marks in a row) gets an empty `.text("")` segment that carries it.
struct SSMLPlanBuilder {
    private(set) var spoken = String.UnicodeScalarView()
    private(set) var spokenCount = 0
    private(set) var segments: [SpeechSegment] = []
    private(set) var marks: [SpeechPlan.Mark] = []

    /// The text segment still growing, not yet in `segments`.
    private var open: (text: String.UnicodeScalarView, count: Int, style: SSMLStyle, start: Int, pause: Int, mark: String?)?
    /// Whitespace seen since the last spoken character: one space, written before the next one.
    private var pendingSpace = false
    private var pendingPause = 0
    private var pendingMark: String?
    /// Ranges of the spoken text the document states explicitly (`sub`, `say-as`): the user's
    /// lexicon leaves them alone.
    private(set) var explicitRanges: [Range<Int>] = []
    /// Ranges of the spoken text whose language the document states: no detection moves them.
    private(set) var languageRanges: [Range<Int>] = []

    /// Character data, read in `style`; `explicit` for what an element says how to read.
    mutating func addText(_ text: String, style: SSMLStyle, explicit: Bool = false) {
        let start = spokenCount
        defer {
            if explicit, spokenCount > start { explicitRanges.append(start..<spokenCount) }
            if style.languageStated, spokenCount > start { languageRanges.append(start..<spokenCount) }
        }
        for scalar in text.unicodeScalars {
            if scalar.properties.isWhitespace {
                pendingSpace = true
                continue
            }
            if let current = open, current.style == style, pendingPause == 0, pendingMark == nil {
                if pendingSpace {
                    open!.text.append(" ")
                    open!.count += 1
                    appendSpoken(" ")
                    pendingSpace = false
                }
            } else {
                closeOpen()
                writePendingSpace()
                open = (String.UnicodeScalarView(), 0, style, spokenCount, pendingPause, pendingMark)
                pendingPause = 0
                pendingMark = nil
            }
            open!.text.append(scalar)
            open!.count += 1
            appendSpoken(scalar)
        }
    }

    /// A `<phoneme>`: `display` goes into the spoken text, `mnemonics` is what is said.
    mutating func addPhonemes(_ mnemonics: String, display: String, style: SSMLStyle) {
        closeOpen()
        let trimmed = collapse(display)
        if display.unicodeScalars.first?.properties.isWhitespace == true { pendingSpace = true }
        if !trimmed.isEmpty { writePendingSpace() }
        let start = spokenCount
        for scalar in trimmed.unicodeScalars { appendSpoken(scalar) }
        append(SpeechSegment(
            content: .phonemes(mnemonics), voice: style.voice, sourceStart: start,
            sourceLength: spokenCount - start, options: options(style)))
        if display.unicodeScalars.last?.properties.isWhitespace == true { pendingSpace = true }
    }

    /// Start or end of `p`/`s`: a new segment, and a space before the next text.
    mutating func boundary() {
        closeOpen()
        if spokenCount > 0 { pendingSpace = true }
    }

    mutating func addBreak(milliseconds: Int, voice: String) {
        closeOpen()
        // A mark already waiting stands before this pause.
        if pendingMark != nil { appendEmpty(voice: voice) }
        pendingPause = min(pendingPause + milliseconds, SSMLValues.maxBreakMilliseconds)
    }

    mutating func addMark(_ name: String, voice: String) {
        closeOpen()
        if pendingMark != nil { appendEmpty(voice: voice) }
        pendingMark = name
    }

    mutating func finish(voice: String) -> SpeechPlan {
        closeOpen()
        if pendingMark != nil || pendingPause > 0 { appendEmpty(voice: voice) }
        return SpeechPlan(segments: segments, spokenText: String(spoken), marks: marks)
    }

    // MARK: -

    private mutating func appendSpoken(_ scalar: Unicode.Scalar) {
        spoken.append(scalar)
        spokenCount += 1
    }

    private mutating func writePendingSpace() {
        if pendingSpace, spokenCount > 0 { appendSpoken(" ") }
        pendingSpace = false
    }

    private mutating func closeOpen() {
        guard let current = open else { return }
        open = nil
        // The pause and mark it took when it opened.
        (pendingPause, pendingMark) = (current.pause, current.mark)
        append(SpeechSegment(
            content: .text(String(current.text)), voice: current.style.voice, sourceStart: current.start,
            sourceLength: current.count, options: options(current.style)))
    }

    private mutating func appendEmpty(voice: String) {
        append(SpeechSegment(content: .text(""), voice: voice, sourceStart: spokenCount, sourceLength: 0))
    }

    /// Appends `segment` with the pause and mark waiting before it.
    private mutating func append(_ segment: SpeechSegment) {
        var segment = segment
        segment.options.pauseBeforeMilliseconds = pendingPause
        segment.options.markBefore = pendingMark
        if let name = pendingMark {
            marks.append(SpeechPlan.Mark(name: name, segmentIndex: segments.count, offset: segment.sourceStart))
        }
        pendingPause = 0
        pendingMark = nil
        segments.append(segment)
    }

    private func options(_ style: SSMLStyle) -> SpeechSegment.Options {
        SpeechSegment.Options(
            spellOut: style.spellOut, rateScale: style.rateScale, pitchScale: style.pitchScale,
            volumeScale: style.volumeScale)
    }

    /// Whitespace runs → one space, none at either end.
    private func collapse(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        var space = false
        for scalar in text.unicodeScalars {
            if scalar.properties.isWhitespace {
                space = !out.isEmpty
            } else {
                if space { out.append(" ") }
                space = false
                out.append(scalar)
            }
        }
        return String(out)
    }
}
