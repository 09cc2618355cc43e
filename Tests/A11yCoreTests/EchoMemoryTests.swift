// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yTestSupport
import Testing

/// The echoes said ahead (`EchoMemory`): what is an echo, what is told back, what is kept.
@Suite struct EchoMemoryTests {
    static let voice = "piper:en_US-joe-medium"
    static let settings = EchoMemory.Settings(voice: voice, rate: 175, pitch: 50, volume: 100)

    func segment(_ text: String, at start: Int, voice: String = voice, spellOut: Bool = false, mark: String? = nil) -> SpeechSegment {
        var options = SpeechSegment.Options()
        options.spellOut = spellOut
        options.markBefore = mark
        return SpeechSegment(content: .text(text), voice: voice, sourceStart: start, sourceLength: text.unicodeScalars.count, options: options)
    }

    func utterance(_ segments: [SpeechSegment], rate: Int = 175) -> Utterance {
        Utterance(segments: segments, rate: rate, pitch: 50, volume: 100)
    }

    func echo(_ utterance: Utterance) -> EchoMemory.Echo? {
        EchoMemory.echo(of: utterance, isSlow: { $0.hasPrefix("piper:") })
    }

    /// A typed key (Orca: a mark, then the letter and a space), a character read (spelled), a digit
    /// posted: each is the echo of its character, told at its place.
    @Test func aCharacterAloneIsAnEchoWhateverItsForm() throws {
        let typed = try #require(echo(utterance([segment("", at: 0, mark: "0:1"), segment("a ", at: 0)])))
        #expect(same(typed.form, EchoMemory.Form(character: "a", spellOut: false)))
        #expect(typed.characterStart == 0 && typed.marks == ["0:1"])
        let read = try #require(echo(utterance([segment("e", at: 0, spellOut: true)])))
        #expect(same(read.form, EchoMemory.Form(character: "e", spellOut: true)))
        let digit = try #require(echo(utterance([segment("  7", at: 4)])))
        #expect(digit.form.character == "7" && digit.characterStart == 6)
        #expect(same(digit.settings, Self.settings))
    }

    @Test func anythingElseIsNot() {
        #expect(echo(utterance([segment("ab", at: 0)])) == nil, "two characters")
        #expect(echo(utterance([segment("a", at: 0), segment("b", at: 1)])) == nil, "one in each segment")
        #expect(echo(utterance([segment("a", at: 0, voice: "en-us")])) == nil, "eSpeak says it at once")
        #expect(echo(utterance([segment("", at: 0), segment("a", at: 0, voice: "en-us")])) == nil, "another voice")
        #expect(echo(utterance([segment(" ", at: 0)])) == nil, "nothing said")
        #expect(echo(utterance([])) == nil)
        var paused = segment("a", at: 0)
        paused.options.pauseBeforeMilliseconds = 200
        #expect(echo(utterance([paused])) == nil, "a pause first")
        var louder = segment("a", at: 0)
        louder.options.volumeScale = 1.5
        #expect(echo(utterance([louder])) == nil, "prosody of its own")
        #expect(echo(utterance([segment(String(repeating: " ", count: 100) + "a", at: 0)])) == nil, "a long text is not walked")
        #expect(echo(utterance([segment("a", at: 0), segment("", at: 1, mark: "late")])) == nil, "a mark after it")
    }

    /// What the engine said at the character's start is told at the character's place, with the
    /// marks of the utterance asked for.
    @Test func anEchoIsToldAsTheUtteranceAskedForIt() throws {
        var memory = EchoMemory(limits: .standard)
        let form = EchoMemory.Form(character: "a", spellOut: false)
        #expect(same(memory.nextToRender(for: Self.settings)?.form, EchoMemory.forms[0]))
        let said = [SynthesisChunk(samples: [1, 2, 3], words: [WordMark(frame: 0, start: 0, length: 1)], marks: [NamedMark(frame: 0, name: "x")])]
        memory.remember(said, for: form, at: Self.settings)
        let asked = try #require(echo(utterance([segment("", at: 0, mark: "3:4"), segment(" a", at: 3)])))
        let told = memory.recall(asked)
        #expect(same(told, [SynthesisChunk(samples: [1, 2, 3], words: [WordMark(frame: 0, start: 4, length: 1)], marks: [NamedMark(frame: 0, name: "3:4")])]))
        #expect(memory.recall(EchoMemory.Echo(settings: Self.settings, form: EchoMemory.Form(character: "b", spellOut: false), characterStart: 0, marks: [])) == nil)
        var faster = Self.settings
        faster.rate = 300
        #expect(memory.recall(EchoMemory.Echo(settings: faster, form: form, characterStart: 0, marks: [])) == nil, "another rate: not rendered yet")
    }

    /// Forms are rendered in order, a failed one passed over; the settings used least recently go
    /// first, whole, and nothing passes the bound.
    @Test func renderedInOrderAndBounded() {
        var memory = EchoMemory(limits: EchoMemory.Limits(bytes: 40))
        let first = EchoMemory.forms[0], second = EchoMemory.forms[1]
        memory.remember([SynthesisChunk(samples: Array(repeating: 1, count: 10))], for: first, at: Self.settings)
        #expect(same(memory.nextToRender(for: Self.settings)?.form, second))
        memory.passOver(second, at: Self.settings)
        #expect(same(memory.nextToRender(for: Self.settings)?.form, EchoMemory.forms[2]))
        #expect(same(memory.bytes, 20))

        var other = Self.settings
        other.pitch = 80
        #expect(same(memory.nextToRender(for: other)?.form, first), "other settings rendered now")
        memory.remember([SynthesisChunk(samples: Array(repeating: 2, count: 5))], for: first, at: other)
        #expect(same(memory.bytes, 30), "the older settings go only when needed")
        memory.remember([SynthesisChunk(samples: Array(repeating: 2, count: 10))], for: second, at: other)
        #expect(memory.bytes == 10 + 20 && memory.recall(.init(settings: Self.settings, form: first, characterStart: 0, marks: [])) == nil,
            "over the bound, the settings used least recently went whole")
        memory.remember([SynthesisChunk(samples: Array(repeating: 3, count: 100))], for: EchoMemory.forms[2], at: other)
        #expect(memory.bytes <= 40, "a form larger than the bound is not kept")
        #expect(same(memory.nextToRender(for: other)?.form, EchoMemory.forms[3]), "and is passed over")
        memory.forgetAll()
        #expect(memory.bytes == 0 && memory.nextToRender(for: other)?.form == EchoMemory.forms[0])
    }

    /// A capital asked at another pitch than the other echoes (Orca signals capitals by pitch) is
    /// learnt: the other echoes' rendering goes on, the capitals at that pitch next after the
    /// lower-case letters, and at every rate after, the first time.
    @Test func capitalsAskedAtTheirOwnPitchAreRenderedAtIt() throws {
        var memory = EchoMemory(limits: .standard)
        let plain = Self.settings
        var capitalPitch = plain
        capitalPitch.pitch = 70
        #expect(same(memory.settingsToRender(plain, echo: nil), plain), "speech at the plain settings")
        #expect(same(memory.steps(for: plain).map(\.form), EchoMemory.forms), "nothing learnt yet")
        let capital = try #require(echo(Utterance(segments: [segment("B", at: 0)], rate: 175, pitch: 70, volume: 100)))
        #expect(same(memory.settingsToRender(capitalPitch, echo: capital), plain), "the plain settings go on rendering")
        let steps = memory.steps(for: plain)
        let lower = EchoMemory.lowerCaseForms
        #expect(steps.prefix(lower).allSatisfy { $0.settings == plain && $0.form.character.isLowercase })
        let capitals = steps.dropFirst(lower).prefix(52)
        #expect(capitals.allSatisfy { $0.settings == capitalPitch && $0.form.character.isUppercase })
        #expect(same(Set(capitals.map(\.form)).count, 52), "each capital typed and read")
        #expect(same(steps.dropFirst(lower + 52).map(\.form), Array(EchoMemory.forms.dropFirst(lower))), "then the rest")

        // The lower-case letters rendered, the next step is a capital at its pitch.
        for step in steps.prefix(lower) { memory.remember([SynthesisChunk(samples: [1])], for: step.form, at: step.settings) }
        #expect(same(memory.nextToRender(for: plain), EchoMemory.Step(form: EchoMemory.Form(character: "A", spellOut: false), settings: capitalPitch)))
        #expect(same(memory.renderedInOrder, lower))
        let capitalA = memory.nextToRender(for: plain)
        memory.remember([SynthesisChunk(samples: [1, 2])], for: try #require(capitalA).form, at: capitalPitch)
        #expect(same(memory.bytes(for: plain), 2 * lower + 4), "a setting's bytes count its capitals at their pitch")

        // Another rate: its capitals are rendered at the pitch learnt, before one is asked for.
        var faster = plain
        faster.rate = 300
        #expect(same(memory.settingsToRender(faster, echo: nil), faster))
        var fasterCapitals = capitalPitch
        fasterCapitals.rate = 300
        #expect(same(memory.steps(for: faster)[lower].settings, fasterCapitals))
        memory.forgetAll()
        #expect(same(memory.steps(for: faster)[lower].settings, fasterCapitals), "a reload forgets the audio, not the client's capitals")

        // A capital at the plain pitch (a client that does not signal them) teaches nothing.
        var other = EchoMemory(limits: .standard)
        _ = other.settingsToRender(plain, echo: nil)
        let samePitch = try #require(echo(Utterance(segments: [segment("B", at: 0)], rate: 175, pitch: 50, volume: 100)))
        #expect(same(other.settingsToRender(plain, echo: samePitch), plain))
        #expect(same(other.steps(for: plain).map(\.form), EchoMemory.forms))
    }

    /// What is being rendered is not dropped to make room for its own next form (it would be rendered
    /// again, and drop the other in turn): the form is passed over instead.
    @Test func whatIsBeingRenderedIsNeverDroppedForItself() throws {
        var memory = EchoMemory(limits: EchoMemory.Limits(bytes: 40))
        let plain = Self.settings
        var capitalPitch = plain
        capitalPitch.pitch = 70
        _ = memory.settingsToRender(plain, echo: nil)
        let capital = try #require(echo(Utterance(segments: [segment("B", at: 0)], rate: 175, pitch: 70, volume: 100)))
        _ = memory.settingsToRender(capitalPitch, echo: capital)
        let first = memory.nextToRender(for: plain)
        var step = try #require(first)
        memory.remember([SynthesisChunk(samples: Array(repeating: 1, count: 15))], for: step.form, at: step.settings)
        for _ in 0..<EchoMemory.lowerCaseForms - 1 {
            let next = memory.nextToRender(for: plain)
            memory.passOver(try #require(next).form, at: plain)
        }
        let capitalStep = memory.nextToRender(for: plain)
        step = try #require(capitalStep)
        #expect(same(step.settings, capitalPitch))
        memory.remember([SynthesisChunk(samples: Array(repeating: 2, count: 15))], for: step.form, at: step.settings)
        #expect(memory.bytes == 30 && memory.recall(.init(settings: plain, form: EchoMemory.forms[0], characterStart: 0, marks: [])) != nil,
            "the plain settings' letter stayed, and the capital does not fit")
        let after = memory.nextToRender(for: plain)
        #expect(after?.settings == capitalPitch && after?.form != step.form, "it was passed over; the next capital comes")
    }

    /// Every character a screen reader echoes is rendered, as text and spelled, lower-case letters first.
    @Test func theFormsCoverLettersDigitsAndPunctuation() {
        #expect(same(EchoMemory.forms.count, 2 * EchoMemory.characters.count))
        #expect(same(EchoMemory.forms.prefix(26).map(\.character), Array("abcdefghijklmnopqrstuvwxyz")))
        #expect(EchoMemory.forms.prefix(52).allSatisfy(\.character.isLowercase) && EchoMemory.lowerCaseForms == 52,
            "the letters as typed, then as read, before the rest")
        for character in "aZ5.,?!@#" {
            #expect(EchoMemory.forms.contains(EchoMemory.Form(character: character, spellOut: false)))
            #expect(EchoMemory.forms.contains(EchoMemory.Form(character: character, spellOut: true)))
        }
        let rendered = EchoMemory.utterance(EchoMemory.Form(character: "q", spellOut: true), Self.settings)
        #expect(same(echo(rendered)?.form, EchoMemory.Form(character: "q", spellOut: true)), "what is rendered is the echo it stands for")
    }
}
