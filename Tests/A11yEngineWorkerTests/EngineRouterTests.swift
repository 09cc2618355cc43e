// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yPronunciation
import A11ySystem
import Glibc
import Synchronization
import SystemPackage
import Testing

@testable import A11yEngineWorker

/// The router between eSpeak and Piper (issue 27), with fake engines: what goes where, and how a
/// mixed utterance comes back as one stream.
@Suite struct EngineRouterTests {
    /// An engine that says each segment as two chunks of `samples` frames of its `tag`, with one
    /// word at the segment's first frame and one at its second chunk, and answers phoneme questions
    /// by naming the voice it was asked in.
    final class Recording: SpeechEngine, PronunciationEngine {
        let tag: Int16
        let samples: Int
        let voiceList: [VoiceInfo]
        /// Fails each synthesis after its first chunk.
        let fails: Bool
        let requests = Mutex<[Utterance]>([])
        let asked = Mutex<[String]>([])

        init(tag: Int16, samples: Int = 10, voices: [VoiceInfo], fails: Bool = false) {
            self.tag = tag
            self.samples = samples
            self.voiceList = voices
            self.fails = fails
        }

        var format: AudioFormat { AudioFormat(sampleRate: 22_050, channels: 1) }

        func synthesize(_ request: Utterance) -> AsyncThrowingStream<SynthesisChunk, any Error> {
            requests.withLock { $0.append(request) }
            let (tag, samples, fails) = (tag, samples, fails)
            return AsyncThrowingStream { continuation in
                var frame = 0
                for segment in request.segments {
                    continuation.yield(SynthesisChunk(
                        samples: Array(repeating: tag, count: samples),
                        words: [WordMark(frame: frame, start: segment.sourceStart, length: 1)],
                        marks: segment.options.markBefore.map { [NamedMark(frame: frame, name: $0)] } ?? []))
                    if fails { return continuation.finish(throwing: SpeechError(.engineFailed, "failed on purpose")) }
                    frame += samples
                    continuation.yield(SynthesisChunk(
                        samples: Array(repeating: tag, count: samples),
                        words: [WordMark(frame: frame, start: segment.sourceStart + 1, length: 1)]))
                    frame += samples
                }
                continuation.finish()
            }
        }

        func voices() async -> [VoiceInfo] { voiceList }
        func resolveVoice(language: String) async throws -> String {
            guard let voice = voiceList.first(where: { $0.languages.contains(language) }) else {
                throw SpeechError(.unknownVoice, "none for \(language)")
            }
            return voice.identifier
        }
        func phonemeInventory(voice: String) async throws -> [PhonemeEntry] {
            asked.withLock { $0.append("inventory \(voice)") }
            return []
        }
        func allMnemonics() async throws -> [String] { [] }
        func ipa(ofText text: String, voice: String) async throws -> String { "ipa(\(text)) in \(voice)" }
        func ipa(ofMnemonics mnemonics: String, voice: String) async throws -> String {
            asked.withLock { $0.append("mnemonics \(mnemonics) in \(voice)") }
            return "IPA<\(mnemonics)>"
        }
        func ipa(ofLetter character: String, voice: String) async throws -> String { "letter \(character) in \(voice)" }
    }

    static let joe = PiperVoice(
        name: "en_US-joe-medium", modelPath: "/v/en_US-joe-medium.onnx", language: "en-us", espeakVoice: "en-us",
        quality: "medium", displayName: "Joe (English, United States)", problem: nil)
    static let broken = PiperVoice(
        name: "fr_FR-broken", modelPath: "/v/fr_FR-broken.onnx", language: "fr-fr", espeakVoice: "fr",
        quality: nil, displayName: "fr_FR-broken", problem: "fr_FR-broken.onnx.json cannot be read")

    func engines() -> (EngineRouter, espeak: Recording, piper: Recording) {
        let espeak = Recording(tag: 1, voices: [
            VoiceInfo(identifier: "fr", name: "French", languages: ["fr-fr", "fr"]),
            VoiceInfo(identifier: "en-us", name: "English (America)", languages: ["en-us"]),
        ])
        let piper = Recording(tag: 2, samples: 7, voices: [Self.joe.info])
        return (EngineRouter(espeak: espeak, piper: piper, piperVoices: [Self.joe, Self.broken]), espeak, piper)
    }

    func segment(_ text: String, _ voice: String, at start: Int, mark: String? = nil) -> SpeechSegment {
        SpeechSegment(
            content: .text(text), voice: voice, sourceStart: start, sourceLength: text.unicodeScalars.count,
            options: .init(markBefore: mark))
    }

    func collect(_ stream: AsyncThrowingStream<SynthesisChunk, any Error>) async throws -> [SynthesisChunk] {
        var chunks: [SynthesisChunk] = []
        for try await chunk in stream { chunks.append(chunk) }
        return chunks
    }

    @Test func anESpeakUtteranceGoesToESpeakAlone() async throws {
        let (router, espeak, piper) = engines()
        let utterance = Utterance(segments: [segment("bonjour", "fr", at: 0)], rate: 175, pitch: 50, volume: 100)
        let chunks = try await collect(router.synthesize(utterance))
        #expect(chunks.flatMap(\.samples) == Array(repeating: 1, count: 20))
        #expect(espeak.requests.withLock { $0 } == [utterance])
        #expect(piper.requests.withLock { $0 }.isEmpty)
    }

    @Test func aMixedUtteranceIsSaidRunByRunAsOneStreamWithItsFramesCountedFromItsStart() async throws {
        let (router, espeak, piper) = engines()
        let text = "Hello, bonjour, goodbye"
        let utterance = Utterance(
            text: text,
            segments: [
                segment("Hello, ", "piper:en_US-joe-medium", at: 0),
                segment("bonjour, ", "fr", at: 7, mark: "here"),
                segment("goodbye", "piper:en_US-joe-medium", at: 16),
            ],
            rate: 175, pitch: 50, volume: 100)
        let chunks = try await collect(router.synthesize(utterance))
        let piperRun = [Int16](repeating: 2, count: 14), espeakRun = [Int16](repeating: 1, count: 20)
        #expect(chunks.flatMap(\.samples) == piperRun + espeakRun + piperRun)
        // Frames from the utterance's start: each run moved by the runs before it, not by its own chunks.
        #expect(chunks.flatMap(\.words) == [
            WordMark(frame: 0, start: 0, length: 1), WordMark(frame: 7, start: 1, length: 1),
            WordMark(frame: 14, start: 7, length: 1), WordMark(frame: 24, start: 8, length: 1),
            WordMark(frame: 34, start: 16, length: 1), WordMark(frame: 41, start: 17, length: 1),
        ])
        #expect(chunks.flatMap(\.marks) == [NamedMark(frame: 14, name: "here")])
        #expect(piper.requests.withLock { $0.map(\.segments.count) } == [1, 1])
        #expect(espeak.requests.withLock { $0.map(\.segments.count) } == [1])
        // Each engine gets the client's whole text, so that its word positions stay the client's.
        #expect(piper.requests.withLock { $0.allSatisfy { $0.text == text } })
    }

    @Test func piperGetsIPAWhereESpeakWouldGetMnemonicsAskedInItsModelsESpeakVoice() async throws {
        let (router, espeak, piper) = engines()
        let utterance = Utterance(
            segments: [SpeechSegment(content: .phonemes("t@m'A:toU"), voice: "piper:en_US-joe-medium", sourceStart: 0, sourceLength: 6)],
            rate: 175, pitch: 50, volume: 100)
        _ = try await collect(router.synthesize(utterance))
        #expect(piper.requests.withLock { $0.first?.segments.first?.content } == .phonemes("IPA<t@m'A:toU>"))
        #expect(espeak.asked.withLock { $0 } == ["mnemonics t@m'A:toU in en-us"])
    }

    @Test func phonemeQuestionsForAPiperVoiceAreAskedOfESpeakInItsModelsVoice() async throws {
        let (router, espeak, _) = engines()
        _ = try await router.phonemeInventory(voice: "piper:en_US-joe-medium")
        _ = try await router.phonemeInventory(voice: "fr")
        #expect(espeak.asked.withLock { $0 } == ["inventory en-us", "inventory fr"])
        #expect(try await router.ipa(ofLetter: "A", voice: "piper:en_US-joe-medium") == "letter A in en-us")
    }

    @Test func voicesListBothEnginesAndSayWhatCannotSpeak() async {
        let (router, _, _) = engines()
        let voices = await router.voices()
        #expect(voices.map(\.identifier) == ["fr", "en-us", "piper:en_US-joe-medium", "piper:fr_FR-broken"])
        #expect(voices.map(\.engine) == ["espeak-ng", "espeak-ng", "piper", "piper"])
        #expect(voices[2].languages == ["en-us", "en"])
        #expect(voices[2].quality == "medium")
        #expect(voices[2].problem == nil)
        #expect(voices[3].problem == "fr_FR-broken.onnx.json cannot be read")
        // Without the runtime, every Piper voice says why it cannot speak.
        let alone = EngineRouter(espeak: Recording(tag: 1, voices: []), piper: nil, piperVoices: [Self.joe])
        #expect(await alone.voices().first?.problem == "the Piper runtime is not installed (a11yd-install-voices)")
    }

    /// A runtime that can be installed while a11yd runs, as a test says.
    final class LateRuntime: PiperSource {
        let installed = Mutex(false)
        let engine: Recording
        init(engine: Recording) { self.engine = engine }
        var runtimeIsInstalled: Bool { installed.withLock { $0 } }
        func startEngine() -> (any SpeechEngine)? { installed.withLock { $0 } ? engine : nil }
    }

    /// The runtime installed after a11yd started: until a reload the voice says so (never "not
    /// installed"), and the reload takes it up, no restart.
    @Test func aRuntimeInstalledWhileRunningIsTakenUpAtTheReload() async throws {
        let piper = Recording(tag: 2, samples: 7, voices: [Self.joe.info])
        let late = LateRuntime(engine: piper)
        let router = EngineRouter(espeak: Recording(tag: 1, voices: []), piper: nil, piperVoices: [], piperSource: late)
        _ = await router.reload(piperVoices: [Self.joe], defaults: [])
        #expect(await router.voices().first?.problem == "the Piper runtime is not installed (a11yd-install-voices)")
        late.installed.withLock { $0 = true }
        #expect(await router.voices().first?.problem?.hasPrefix("the Piper runtime was installed after a11yd started: reload a11yd") == true)
        let utterance = Utterance(segments: [segment("Hello", "piper:en_US-joe-medium", at: 0)], rate: 175, pitch: 50, volume: 100)
        await #expect(throws: SpeechError.self) { _ = try await collect(router.synthesize(utterance)) }

        let unknown = await router.reload(piperVoices: [Self.joe], defaults: [("en", "piper:en_US-joe-medium")])
        #expect(unknown.isEmpty, "the configured voice can speak now")
        #expect(await router.voices().first?.problem == nil)
        let chunks = try await collect(router.synthesize(utterance))
        #expect(chunks.flatMap(\.samples).allSatisfy { $0 == 2 } && !chunks.isEmpty, "said by the runtime taken up")
    }

    @Test func aConfiguredVoiceSaysItsLanguageAndAnUnknownOneIsLeftToESpeak() async throws {
        let (router, _, _) = engines()
        #expect(try await router.resolveVoice(language: "en-us") == "en-us")
        let unknown = await router.setDefaultVoices([
            ("en", "piper:en_US-joe-medium"), ("fr", "piper:fr_FR-broken"), ("de", "piper:nobody"),
        ])
        #expect(unknown.map(\.voice) == ["piper:fr_FR-broken", "piper:nobody"])
        #expect(try await router.resolveVoice(language: "en") == "piper:en_US-joe-medium")
        #expect(try await router.resolveVoice(language: "en_US.UTF-8") == "piper:en_US-joe-medium")
        #expect(try await router.resolveVoice(language: "fr-fr") == "fr")
    }

    @Test func aPiperVoiceWithoutTheRuntimeFailsItsItemWithTheReason() async {
        let alone = EngineRouter(espeak: Recording(tag: 1, voices: []), piper: nil, piperVoices: [Self.joe])
        let utterance = Utterance(segments: [segment("Hello", "piper:en_US-joe-medium", at: 0)], rate: 175, pitch: 50, volume: 100)
        await #expect(throws: SpeechError.self) { _ = try await collect(alone.synthesize(utterance)) }
    }

    // MARK: - Echoes said ahead (EchoMemory)

    /// Once the natural voice speaks at a rate, every echo is rendered at it in the background, and
    /// an echo asked for then is told at once, the engine not asked, with the words and marks of the
    /// utterance asked for. eSpeak's voices are never rendered ahead.
    @Test func echoesAreSaidAheadInTheNaturalVoiceAndToldAtOnce() async throws {
        let espeak = Recording(tag: 1, voices: [VoiceInfo(identifier: "en-us", name: "English", languages: ["en-us"])])
        let piper = Recording(tag: 2, samples: 7, voices: [Self.joe.info])
        let router = EngineRouter(espeak: espeak, piper: piper, piperVoices: [Self.joe], echoes: .standard)
        let sentence = Utterance(segments: [segment("Hello there", "piper:en_US-joe-medium", at: 0)], rate: 300, pitch: 50, volume: 100)
        _ = try await collect(router.synthesize(sentence))
        await router.echoRendering.withLock { $0.task }?.value
        let rendered = piper.requests.withLock { $0 }.dropFirst()
        #expect(rendered.count == EchoMemory.forms.count, "every form rendered once: \(rendered.count)")
        #expect(rendered.allSatisfy { $0.rate == 300 }, "at the rate the voice was used at")

        var typed = segment("a ", "piper:en_US-joe-medium", at: 5)
        typed.options.markBefore = "5:6"
        let echo = Utterance(segments: [typed], rate: 300, pitch: 50, volume: 100)
        let told = try await collect(router.synthesize(echo))
        #expect(piper.requests.withLock { $0.count } == 1 + EchoMemory.forms.count, "told without asking the engine")
        #expect(told.flatMap(\.words) == [WordMark(frame: 0, start: 5, length: 1), WordMark(frame: 7, start: 6, length: 1)])
        #expect(told.first?.marks == [NamedMark(frame: 0, name: "5:6")])

        _ = try await collect(router.synthesize(Utterance(segments: [segment("a", "en-us", at: 0)], rate: 300, pitch: 50, volume: 100)))
        #expect(router.echoRendering.withLock { $0.task } == nil, "nothing rendered ahead for eSpeak")
    }

    /// Speech in the natural voice comes first: a rendering under way is cut short for it, and goes
    /// on once it is over.
    @Test func speechCutsTheRenderingShortAndItGoesOnAfter() async throws {
        let piper = Recording(tag: 2, samples: 7, voices: [Self.joe.info])
        let router = EngineRouter(espeak: Recording(tag: 1, voices: []), piper: piper, piperVoices: [Self.joe], echoes: .standard)
        let settings = EchoMemory.Settings(voice: "piper:en_US-joe-medium", rate: 175, pitch: 50, volume: 100)
        do {
            let held = router.countedAsSpeech(EngineRouter.replaying([]))
            router.renderEchoes(at: settings)
            // The rendering task has had every chance to run: it waits for the speech to be let go.
            for _ in 0..<100 { await Task.yield() }
            #expect(router.echoes.withLock { $0.nextToRender(for: settings) }?.form == EchoMemory.forms[0], "nothing rendered while speech is held")
            #expect(piper.requests.withLock { $0.isEmpty })
            withExtendedLifetime(held) {}
        }
        await router.echoRendering.withLock { $0.task }?.value
        #expect(router.echoes.withLock { $0.nextToRender(for: settings) } == nil, "all rendered once the speech was let go")
    }

    // MARK: - Said again (SpeechMemory)

    /// A key's echo said again comes from memory, the same chunks, words and marks, the engines not
    /// asked; a mixed utterance as well.
    @Test func aShortUtteranceSaidAgainIsReplayedWithoutAnEngine() async throws {
        let (router, espeak, piper) = engines()
        let letter = Utterance(segments: [segment("a", "fr", at: 0, mark: "m")], rate: 175, pitch: 50, volume: 100)
        let mixed = Utterance(
            text: "Hi, salut",
            segments: [segment("Hi, ", "piper:en_US-joe-medium", at: 0), segment("salut", "fr", at: 4)],
            rate: 175, pitch: 50, volume: 100)
        let first = try await collect(router.synthesize(letter))
        let firstMixed = try await collect(router.synthesize(mixed))
        #expect(try await collect(router.synthesize(letter)) == first)
        #expect(try await collect(router.synthesize(mixed)) == firstMixed)
        #expect(first.flatMap(\.marks) == [NamedMark(frame: 0, name: "m")] && first.flatMap(\.words).count == 2)
        #expect(espeak.requests.withLock { $0.count } == 2, "the letter, then the mixed one's French run")
        #expect(piper.requests.withLock { $0.count } == 1)
        // Anything else in the request is another utterance.
        var faster = letter
        faster.rate = 300
        _ = try await collect(router.synthesize(faster))
        #expect(espeak.requests.withLock { $0.count } == 3)
    }

    /// Only what an engine said whole is kept: a synthesis let go before its end, one that failed, a
    /// text too long to be a short echo, and audio longer than the memory keeps are asked again.
    @Test func whatWasCutShortFailedOrTooLongIsAskedAgain() async throws {
        func saidTwice(_ router: EngineRouter, _ utterance: Utterance, takingOnlyTheFirstChunk: Bool = false) async {
            for _ in 1...2 {
                var chunks = router.synthesize(utterance).makeAsyncIterator()
                if takingOnlyTheFirstChunk {
                    _ = try? await chunks.next()
                } else {
                    while (try? await chunks.next()) != nil {}
                }
            }
        }
        let letter = Utterance(segments: [segment("a", "fr", at: 0)], rate: 175, pitch: 50, volume: 100)

        let (cut, cutEngine, _) = engines()
        await saidTwice(cut, letter, takingOnlyTheFirstChunk: true)
        #expect(cutEngine.requests.withLock { $0.count } == 2, "let go after its first chunk")

        let failingEngine = Recording(tag: 1, voices: [], fails: true)
        let failing = EngineRouter(espeak: failingEngine, piper: nil, piperVoices: [])
        await saidTwice(failing, letter)
        #expect(failingEngine.requests.withLock { $0.count } == 2, "failed")

        let (long, longEngine, _) = engines()
        let text = String(repeating: "a", count: SpeechMemory.longestText + 1)
        await saidTwice(long, Utterance(segments: [segment(text, "fr", at: 0)], rate: 175, pitch: 50, volume: 100))
        #expect(longEngine.requests.withLock { $0.count } == 2, "a long text")

        let lengthyEngine = Recording(tag: 1, samples: 11, voices: [])
        let lengthy = EngineRouter(
            espeak: lengthyEngine, piper: nil, piperVoices: [], memory: .init(samplesPerUtterance: 21, bytes: 1000))
        await saidTwice(lengthy, letter)
        #expect(lengthyEngine.requests.withLock { $0.count } == 2, "22 samples where 21 are kept")
        let keptEngine = Recording(tag: 1, samples: 10, voices: [])
        let kept = EngineRouter(
            espeak: keptEngine, piper: nil, piperVoices: [], memory: .init(samplesPerUtterance: 21, bytes: 1000))
        await saidTwice(kept, letter)
        #expect(keptEngine.requests.withLock { $0.count } == 1, "20 samples are kept")
    }

    /// Voices found again (SIGHUP): a model may have changed under its name, so nothing said before
    /// is replayed.
    @Test func aReloadForgetsWhatWasSaid() async throws {
        let (router, _, piper) = engines()
        let hello = Utterance(segments: [segment("Hello", "piper:en_US-joe-medium", at: 0)], rate: 175, pitch: 50, volume: 100)
        _ = try await collect(router.synthesize(hello))
        _ = try await collect(router.synthesize(hello))
        #expect(piper.requests.withLock { $0.count } == 1)
        _ = await router.reload(piperVoices: [Self.joe], defaults: [])
        _ = try await collect(router.synthesize(hello))
        #expect(piper.requests.withLock { $0.count } == 2)
    }
}

/// Voices found in folders (issue 27: a user drops `NAME.onnx` + `NAME.onnx.json` in a folder).
@Suite struct PiperVoicesTests {
    /// Two synthesis threads where there are two cores (measured to help: PiperRuntime), never more
    /// threads than cores, one where the count is unknown.
    @Test func synthesisThreadsFollowTheCores() {
        #expect([1, 2, 4, 64, 0, -1].map(PiperRuntime.synthesisThreads(cores:)) == [1, 2, 2, 2, 1, 1])
    }

    func folder() -> String {
        var template = Array("/tmp/a11yd-voices-XXXXXX".utf8CString)
        return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    }

    func write(_ path: String, _ text: String) {
        let file = fopen(path, "w")!
        fputs(text, file)
        fclose(file)
    }

    static let description = """
        {"audio": {"sample_rate": 22050, "quality": "medium"}, "espeak": {"voice": "en-us"},
         "language": {"code": "en_US", "name_english": "English", "country_english": "United States"}, "dataset": "joe",
         "phoneme_type": "espeak", "phoneme_id_map": {"a": [14]}}
        """

    @Test func voicesAreFoundTheUsersFirstAndEachProblemIsSaid() {
        let user = folder(), system = folder()
        write(user + "/en_US-joe-medium.onnx", "model")
        write(user + "/en_US-joe-medium.onnx.json", Self.description)
        write(system + "/en_US-joe-medium.onnx", "another model")
        write(system + "/en_US-joe-medium.onnx.json", Self.description)
        write(system + "/fr_FR-lonely.onnx", "model without description")
        write(system + "/xx-bad.onnx", "model")
        write(system + "/xx-bad.onnx.json", "{ not json")
        write(system + "/zh-pinyin.onnx", "model")
        write(system + "/zh-pinyin.onnx.json", #"{"phoneme_type": "pinyin", "language": {"code": "zh_CN"}}"#)
        write(system + "/notes.txt", "not a voice")
        let voices = PiperVoices.scan([FilePath(user), "/nonexistent", FilePath(system)])
        #expect(voices.map(\.name) == ["en_US-joe-medium", "fr_FR-lonely", "xx-bad", "zh-pinyin"])
        #expect(voices[0].modelPath.string == user + "/en_US-joe-medium.onnx")
        #expect(voices[0].language == "en-us")
        #expect(voices[0].espeakVoice == "en-us")
        #expect(voices[0].displayName == "Joe (English, United States)")
        #expect(voices[0].problem == nil)
        #expect(voices[0].info.identifier == "piper:en_US-joe-medium")
        #expect(voices[1].problem == "no fr_FR-lonely.onnx.json beside the model")
        #expect(voices[2].problem?.hasPrefix("xx-bad.onnx.json is not a Piper voice description") == true)
        #expect(voices[3].problem?.contains("can phonemise only through eSpeak") == true)
    }

    /// The runtime is `venv/bin/python3` and the worker script in the folder `A11YD_PIPER_RUNTIME`
    /// names (trailing slashes or not), and what the launcher is told it may read is that folder
    /// (once for the venv, once for the script) and the voice folders.
    @Test func theRuntimeIsFoundInItsFolderAndItsLaunchReadsOnlyThatFolderAndTheVoices() throws {
        let runtime = folder()
        #expect(PiperRuntime.find(environment: [PiperRuntime.folderSwitch: runtime]) == nil, "no venv yet")
        #expect(mkdir(runtime + "/venv", 0o700) == 0 && mkdir(runtime + "/venv/bin", 0o700) == 0)
        write(runtime + "/venv/bin/python3", "")
        #expect(chmod(runtime + "/venv/bin/python3", 0o700) == 0)
        write(runtime + "/a11yd_piper_worker.py", "")
        defer {
            for file in ["/venv/bin/python3", "/a11yd_piper_worker.py"] { unlink(runtime + file) }
            for folder in ["/venv/bin", "/venv", ""] { rmdir(runtime + folder) }
        }
        let found = try #require(PiperRuntime.find(environment: [PiperRuntime.folderSwitch: runtime + "//"]))
        #expect(found.python.string == runtime + "/venv/bin/python3")
        #expect(found.script.string == runtime + "/a11yd_piper_worker.py")

        let launch = found.launch(sampleRate: 22050, voiceFolders: ["/v/user/", "/v/system"], preload: nil, idleLimit: nil, environment: [:])
        let separator = try #require(launch.arguments.firstIndex(of: "--"))
        #expect(Array(launch.arguments[..<separator]) == [
            "--engine-worker", "--exec", runtime + "/venv/bin/python3",
            "--read", runtime, "--read", runtime, "--read", "/v/user", "--read", "/v/system",
        ])
        #expect(launch.arguments[(separator + 1)...].starts(with: [runtime + "/a11yd_piper_worker.py", "--sample-rate", "22050"]))
        #expect(launch.arguments.suffix(4) == ["--voices-dir", "/v/user", "--voices-dir", "/v/system"])
    }

    /// The interpreter's prefix (its standard library) is readable: two folders up from the program.
    @Test func theLauncherReadsTheInterpretersPrefix() {
        let rules = SandboxedLauncher.rules(executing: "/usr/bin/python3", reading: [])
        #expect(rules.contains(Landlock.Rule("/usr", .read)))
        #expect(rules.contains(Landlock.Rule("/usr/bin/python3", [.execute, .readFile])))
    }

    @Test func theFoldersFollowXDG() {
        #expect(PiperVoices.folders(environment: ["HOME": "/home/u"]) == [
            "/home/u/.local/share/a11yd/voices", "/usr/local/share/a11yd/voices", "/usr/share/a11yd/voices",
        ])
        #expect(PiperVoices.folders(environment: ["XDG_DATA_HOME": "/d", "XDG_DATA_DIRS": "/s:relative:/d"]) == [
            "/d/a11yd/voices", "/s/a11yd/voices",
        ])
    }
}
