// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yDaemon
import A11yProtocol
import A11yTestSupport
import Foundation
import Testing

/// `[voice] detect_languages` in the running daemon: a French text with an English and a German
/// sentence is one item in three voices, its words told at the client's offsets; the same through
/// SSIP, as Orca sends it.
@Suite("Each sentence in its own language, in the daemon")
struct LanguageDetectionDaemonTests {
    static func configuration() -> DaemonConfiguration {
        var configuration = DaemonConfiguration()
        configuration.detectLanguages = ["fr", "en", "de", "es", "it"]
        return configuration
    }

    static let text = "Le conseil municipal s'est réuni hier soir pour discuter du budget de l'année prochaine. "
        + "The committee will publish its final report on the new railway line next month. "
        + "Die Bürgerinnen und Bürger können ihre Meinung bis Ende des Monats schriftlich einreichen."

    @Test func aFrenchTextWithAnEnglishAndAGermanSentenceIsOneItemInThreeVoices() async throws {
        let daemon = try await DaemonHarness(configuration: Self.configuration())
        let client = try await daemon.client()
        var post = Post.say(Self.text)
        post.lang = "fr"
        try await client.send(RequestLine(.pronounce(post), id: .string("show")))
        let shown = try #require(try await client.waitFor("pronounce") { $0.id == .string("show") }.ipa)
        // a11yd shows a voice as "| (en) "; eSpeak's own switch to English inside its French voice, for a word
        // its French dictionary flags, shows "(en)" with no space.
        #expect(shown.contains("| (en) ") && shown.contains("| (de) "), "an English and a German voice: \(shown)")
        let spoken = try await client.post(post)
        #expect(try await client.finished(spoken).successful == true)
        let events = await client.events(of: spoken)
        #expect(events.filter { $0.event == "started" }.count == 1)
        #expect(events.filter { $0.event == "finished" }.count == 1)
        let words = events.filter { $0.event == "word" }.compactMap(\.start)
        let scalars = Array(Self.text.unicodeScalars)
        func offset(of word: String) -> Int {
            let target = Array(word.unicodeScalars)
            return (0...(scalars.count - target.count)).first { Array(scalars[$0..<$0 + target.count]) == target }!
        }
        for word in ["conseil", "committee", "railway", "Bürgerinnen", "schriftlich"] {
            #expect(words.contains(offset(of: word)), "'\(word)' told at its offset: \(words)")
        }
        // A short French label is not moved.
        var short = Post.say("Option incorrecte")
        short.lang = "fr"
        try await client.send(RequestLine(.pronounce(short), id: .string("short")))
        let label = try #require(try await client.waitFor("short") { $0.id == .string("short") }.ipa)
        #expect(!label.contains("(en") && !label.contains("(it"), "a short French label stays French: \(label)")
        await daemon.shutDown()
    }

    /// A French text with an English sentence, as a speech-dispatcher client sends it.
    static let ssipText = "Le rapport annuel sera publié demain matin sur le site. "
        + "Please read the release notes carefully before you install the new version of the software."

    /// `SET self LANGUAGE fr` then `SPEAK` over SSIP, as plain text and as Orca's SSML (a mark
    /// before every word): one item each, heard whole at the sink, its English sentence said by the
    /// English voice. SSIP has no `pronounce`; what tells the voice is when each word is heard: each
    /// voice says the English words at its own pace, so the SSIP item's word times, from its first
    /// English word on, must follow the same message posted in French over JSON (which `pronounce`
    /// shows in two voices), and not the message with every word held French (a span's `lang`, an
    /// SSML `<lang>`: what a client states, which detection never overrides).
    @Test func anSSIPTextInFrenchWithAnEnglishSentenceIsSaidInBothVoices() async throws {
        let daemon = try await DaemonHarness(configuration: Self.configuration(), ssip: true)
        let poster = try await daemon.client()
        let watcher = try await daemon.client()
        try await watcher.send(RequestLine(.subscribe(all: true), id: .string("subscribe")))
        try await watcher.waitFor("subscribed") { $0.id == .string("subscribe") }
        let text = Self.ssipText
        let englishStart = text.unicodeScalars.count - (text.split(separator: ". ").last.map { $0.unicodeScalars.count } ?? 0)
        let englishWords = wordStarts(text).filter { $0 >= englishStart }
        var marked = ""
        var offset = 0
        for word in text.split(separator: " ", omittingEmptySubsequences: false) {
            let length = word.unicodeScalars.count
            marked += "<mark name=\"\(offset):\(offset + length)\"/>\(word) "
            offset += length + 1
        }

        /// Each English word's time after the first, as the daemon told them.
        func englishTimes(_ id: UInt64, on client: TestClient) async -> [Int: Double] {
            var times: [Int: Double] = [:]
            for (message, at) in await client.timedEvents(of: id) where message.event == "word" {
                if let start = message.start, start >= englishStart, times[start] == nil { times[start] = at }
            }
            guard let first = englishWords.first, let zero = times[first] else { return [:] }
            return times.mapValues { $0 - zero }
        }
        /// `post` said over JSON: its seconds voiced at the sink and its English words' times.
        func said(_ post: Post) async throws -> (voiced: Double, times: [Int: Double], id: UInt64) {
            let recorder = try daemon.recorder()
            let id = try await poster.post(post)
            #expect(try await poster.finished(id).successful == true)
            try await Task.sleep(for: .milliseconds(150))
            return (recorder.stop().voicedDuration, await englishTimes(id, on: poster), id)
        }
        func posted(_ content: Post, heldFrench: Bool = false) -> Post {
            var post = content
            post.lang = "fr"
            if heldFrench, post.ssml == nil { post.spans = [.init(start: 0, length: text.unicodeScalars.count, lang: "fr")] }
            return post
        }

        let ssip = try RawSSIPClient(path: try #require(daemon.ssipSocketPath))
        let setUp = try await offThePool {
            [try ssip.exchange("SET self CLIENT_NAME a11yd:test:main"), try ssip.exchange("SET self LANGUAGE fr")]
        }
        #expect(setUp[1] == "201 OK LANGUAGE SET\r\n", "\(setUp)")
        var seen: Set<UInt64> = []
        let forms: [(name: String, ssmlMode: String, data: String, switched: Post, heldFrench: Post)] = [
            ("plain text", "off", text, posted(.say(text)), posted(.say(text), heldFrench: true)),
            ("Orca's SSML", "on", "<speak>\(marked)</speak>", posted(Post(ssml: "<speak>\(marked)</speak>")),
             posted(Post(ssml: "<speak><lang xml:lang=\"fr\">\(marked)</lang></speak>"))),
        ]
        for form in forms {
            try await poster.send(RequestLine(.pronounce(form.switched), id: .string("show \(form.name)")))
            let shown = try #require(try await poster.waitFor("pronounce") { $0.id == .string("show \(form.name)") }.ipa)
            // a11yd's "| (en) ", not eSpeak's own "(en)" for a word its French voice flags as English.
            #expect(shown.contains("| (en) "), "\(form.name): the English sentence in an English voice: \(shown)")
            let switched = try await said(form.switched), french = try await said(form.heldFrench)
            seen.formUnion([switched.id, french.id])

            let recorder = try daemon.recorder()
            let replies = try await offThePool {
                [try ssip.exchange("SET self SSML_MODE \(form.ssmlMode)"), try ssip.exchange("SPEAK"), try ssip.exchange(form.data + "\r\n.")]
            }
            #expect(replies[2].hasSuffix("225 OK MESSAGE QUEUED\r\n"), "\(form.name): \(replies)")
            let before = seen
            let started = try await watcher.waitFor("the SSIP item started") { message in
                message.event == "started" && message.utterance.map { !before.contains($0) } == true
            }
            let id = try #require(started.utterance)
            seen.insert(id)
            let finished = try await watcher.finished(id)
            try await Task.sleep(for: .milliseconds(150))
            let recording = recorder.stop()
            #expect(finished.successful == true, "\(form.name): \(finished)")
            let events = await watcher.events(of: id)
            #expect(events.filter { $0.event == "started" }.count == 1, "\(form.name)")
            #expect(events.filter { $0.event == "finished" }.count == 1, "\(form.name)")
            let told = Set(events.filter { $0.event == "word" }.compactMap(\.start))
            for word in ["rapport", "publié", "release", "install", "software"] {
                let offset = text.unicodeScalars.count - text.split(separator: word, maxSplits: 1).dropFirst().joined().unicodeScalars.count
                    - word.unicodeScalars.count
                #expect(told.contains(offset), "\(form.name): '\(word)' told at its offset \(offset): \(told.sorted())")
            }
            let words = await watcher.timedEvents(of: id).filter { $0.message.event == "word" }.map { recorder.elapsed(at: $0.at) }
            let problems = HeardWhole(reference: switched.voiced).problems(in: recording, words: words)
            #expect(problems.isEmpty, "\(form.name): heard whole, as the same message posted in French: \(problems)")

            // Median distance, in seconds, between two items' English word times (the median: a word
            // event delivered late on a loaded machine moves it little).
            let heard = await englishTimes(id, on: watcher)
            func distance(_ other: [Int: Double]) -> Double {
                let common = englishWords.filter { heard[$0] != nil && other[$0] != nil }
                guard common.count >= englishWords.count / 2 else { return .infinity }
                return common.map { abs(heard[$0]! - other[$0]!) }.sorted()[common.count / 2]
            }
            let toSwitched = distance(switched.times), toFrench = distance(french.times)
            print(String(format: "SSIP %@: English words %.3f s from the switched message's, %.3f s from the message held French",
                         form.name, toSwitched, toFrench))
            #expect(toSwitched < toFrench / 2,
                    "\(form.name): said as the switched message (\(toSwitched) s) rather than in French (\(toFrench) s)")
        }
        ssip.close()
        await daemon.shutDown()
    }
}
