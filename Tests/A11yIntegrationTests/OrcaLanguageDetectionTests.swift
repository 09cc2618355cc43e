// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yDaemon
import A11yProtocol
import A11yTestSupport
import Foundation
import Testing

/// Orca itself, headless, its voice French (scripts/orca-ssip-test.sh --detect-languages), speaking
/// SSIP to the daemon that detects the languages a French user reads: as a user tabbing through a
/// French window hears it, a button named with a French, an English and a German sentence, and a
/// short French button.
@Suite(.serialized) struct OrcaLanguageDetectionTests {
    /// The second button's name in the script's French window, a sentence in each language.
    static let french = "Le rapport annuel sera publié demain matin sur le site."
    static let english = "Please read the release notes carefully before you install the new version of the software."
    static let german = "Die Bürgerinnen und Bürger können ihre Meinung bis Ende des Monats schriftlich einreichen."

    /// Orca sends each utterance as SSML with a mark before every word, a widget's role after its
    /// name, with `SET self LANGUAGE fr` before it. The daemon says each as one item, `spoken`, every
    /// word told at Orca's offsets, heard at the sink. Which voice said a sentence shows in when its
    /// words are heard, each voice at its own pace: from its first word on, the English sentence and
    /// the German one must be timed closer to the same SSML posted over JSON with each sentence held in
    /// its language by `<lang>` than to the same held French (`pronounce` shows detection's plan
    /// for Orca's utterance in an English and a German voice). The first button, "Annuler", is said
    /// in French: `pronounce` shows Orca's utterance in the French voice alone, and its words are
    /// timed as the same held French rather than held English.
    @Test func orcaReadingFrenchSaysTheEnglishAndGermanSentencesInTheirVoices() async throws {
        let daemon = try await DaemonHarness(configuration: LanguageDetectionDaemonTests.configuration(), ssip: true)
        let watcher = try await daemon.client()
        try await watcher.send(RequestLine(.subscribe(all: true), id: .string("subscribe")))
        try await watcher.waitFor("subscribed") { $0.id == .string("subscribe") }
        let recorder = try daemon.recorder()
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/orca-ssip-test.sh").path
        let logs = daemon.pulse.directory.path + "/orca-logs"
        let result = try await run(
            "/bin/bash", [script, "--socket", try #require(daemon.ssipSocketPath), "--detect-languages", "fr,en,de,es,it"],
            environment: ["PATH": "/usr/bin:/bin", "ORCA_TEST_KEEP": logs], timeout: .seconds(120))
        let recording = recorder.stop()
        let orcaLog = (try? String(contentsOfFile: logs + "/orca.log", encoding: .utf8)) ?? ""
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)\n\(orcaLog)")

        // What Orca said, by item: a `finished` tells the text.
        let finishes = await watcher.received.filter { $0.event == "finished" }
        let items = finishes.map { "#\($0.utterance ?? 0) \($0.reason.map { "\($0)" } ?? "?"): \($0.text ?? "")" }
        func item(containing text: String) async throws -> (id: UInt64, text: String) {
            let found = finishes.filter { $0.text?.contains(text) == true }
            #expect(found.count == 1, "'\(text)' in one item: \(items)")
            let finished = try #require(found.first, "'\(text)' said: \(items)")
            #expect(finished.successful == true, "'\(text)' spoken to its end: \(items)")
            let id = try #require(finished.utterance), events = await watcher.events(of: id)
            #expect(events.filter { $0.event == "started" }.count == 1, "\(items)")
            #expect(events.filter { $0.event == "finished" }.count == 1, "\(items)")
            return (id, try #require(finished.text))
        }
        #expect(finishes.allSatisfy { $0.successful == true }, "everything Orca said spoken to its end: \(items)")
        let button = try await item(containing: Self.english)
        let cancel = try await item(containing: "Annuler")
        #expect(button.text.hasPrefix([Self.french, Self.english, Self.german].joined(separator: " ")), "\(button.text)")

        // Every word told at Orca's offset; the button heard at the sink while its item played.
        let timed = await watcher.timedEvents(of: button.id)
        for (id, text) in [button, cancel] {
            let told = Set(await watcher.events(of: id).filter { $0.event == "word" }.compactMap(\.start))
            let missing = wordStarts(text).filter { !told.contains($0) }
            #expect(missing.isEmpty, "every word of '\(text)' told: \(missing) missing, told \(told.sorted())")
        }
        let playing = timed.filter { $0.message.event == "started" || $0.message.event == "finished" }.map { recorder.elapsed(at: $0.at) }
        let voiced = recording.audibleDuration(threshold: 0.01, window: 0.02, from: playing.first ?? 0, to: playing.last ?? 0)

        // The same SSML as Orca's, posted over JSON in French, its parts held in a language by `<lang>`
        // or not: `held` gives each part's first and end offsets and its language.
        let poster = try await daemon.client()
        func marked(_ text: String, holding held: [(from: Int, to: Int, lang: String)] = []) -> Post {
            var body = ""
            var offset = 0
            var holding: Int?
            for word in text.split(separator: " ", omittingEmptySubsequences: false) {
                if let end = holding, offset >= end { body += "</lang>"; holding = nil }
                if holding == nil, let part = held.first(where: { $0.from == offset }) {
                    body += "<lang xml:lang=\"\(part.lang)\">"
                    holding = part.to
                }
                let length = word.unicodeScalars.count
                body += "<mark name=\"\(offset):\(offset + length)\"/>\(word) "
                offset += length + 1
            }
            if holding != nil { body += "</lang>" }
            var post = Post(ssml: "<speak>\(body)</speak>")
            post.lang = "fr"
            return post
        }
        func marked(_ text: String, heldIn lang: String) -> Post { marked(text, holding: [(0, text.unicodeScalars.count, lang)]) }
        func shown(_ post: Post) async throws -> String {
            let tag = RequestID.string(UUID().uuidString)
            try await poster.send(RequestLine(.pronounce(post), id: tag))
            return try #require(try await poster.waitFor("pronounce") { $0.id == tag }.ipa)
        }
        /// Each word's time, from `first` (an offset) on, relative to that word's.
        func times(_ timed: [(message: ServerMessage, at: Double)], from first: Int) -> [Int: Double] {
            var times: [Int: Double] = [:]
            for (message, at) in timed where message.event == "word" {
                if let start = message.start, times[start] == nil { times[start] = at }
            }
            guard let zero = times[first] else { return [:] }
            return times.filter { $0.key >= first }.mapValues { $0 - zero }
        }
        /// `post` said: its events and its seconds voiced at the sink.
        func said(_ post: Post) async throws -> (timed: [(message: ServerMessage, at: Double)], voiced: Double) {
            let recorder = try daemon.recorder()
            let id = try await poster.post(post)
            #expect(try await poster.finished(id).successful == true)
            try await Task.sleep(for: .milliseconds(150))
            return (await poster.timedEvents(of: id), recorder.stop().voicedDuration)
        }
        /// Median distance, in seconds, between the times of `words` in two items (the median: a word
        /// event delivered late on a loaded machine moves it little).
        func distance(_ words: [Int], _ heard: [Int: Double], _ other: [Int: Double]) -> Double {
            let common = words.filter { heard[$0] != nil && other[$0] != nil }
            guard common.count >= max(1, words.count / 2) else { return .infinity }
            return common.map { abs(heard[$0]! - other[$0]!) }.sorted()[common.count / 2]
        }
        /// Where `part` starts in `text`, in Unicode scalars.
        func offset(of part: String, in text: String) throws -> Int {
            let range = try #require(text.range(of: part))
            return text.unicodeScalars.distance(from: text.startIndex, to: range.lowerBound)
        }

        // Detection's plan for Orca's utterance, as `pronounce` shows it.
        let pronounced = try await shown(marked(button.text))
        #expect(pronounced.contains("| (en) ") && pronounced.contains("| (de) "), "an English and a German voice: \(pronounced)")
        // What was heard, against the same said with each sentence held in its own language, and all
        // held French.
        let english = try offset(of: Self.english, in: button.text), german = try offset(of: Self.german, in: button.text)
        let role = try offset(of: " push button", in: button.text) + 1
        let sentences = [(from: 0, to: english, lang: "fr"), (english, german, "en"), (german, role, "de")]
        let inTheirLanguages = try await said(marked(button.text, holding: sentences))
        let heldFrench = try await said(marked(button.text, heldIn: "fr"))
        print(String(format: "Orca's button: %.2f s played, %.2f s voiced at the sink; the same, each sentence in its language, %.2f s, held French %.2f s",
                     (playing.last ?? 0) - (playing.first ?? 0), voiced, inTheirLanguages.voiced, heldFrench.voiced))
        #expect(abs(voiced - inTheirLanguages.voiced) <= 0.1 * inTheirLanguages.voiced,
                "heard at the sink as long as the same, each sentence in its language: \(voiced) s, \(inTheirLanguages.voiced) s")
        let starts = wordStarts(button.text)
        for (first, end, lang) in sentences.dropFirst() {
            let words = starts.filter { $0 > first && $0 < end }
            let heard = times(timed, from: first)
            let toOwn = distance(words, heard, times(inTheirLanguages.timed, from: first))
            let toFrench = distance(words, heard, times(heldFrench.timed, from: first))
            print(String(format: "Orca's sentence in %@: its words %.3f s from the same held in %@, %.3f s from the same held French",
                         lang, toOwn, lang, toFrench))
            // Closer to its own voice's timing than to French's. Both distances carry the same jitter
            // of the events' arrival, and German's pace is near French's, so no margin beyond the
            // jitter is asked.
            #expect(toOwn < toFrench, "the sentence in \(lang) said in \(lang) (\(toOwn) s) rather than in French (\(toFrench) s)")
        }

        // The short French label, in French. a11yd shows each voice as "(fr) " at the start and "| (en) " where it changes; eSpeak's
        // French voice shows its own "(en)" (no space) for a word its dictionary flags as English.
        let label = try await shown(marked(cancel.text))
        let voiceChange = label.range(of: #"\| \([a-z-]+\) "#, options: .regularExpression)
        #expect(label.hasPrefix("(fr) ") && voiceChange == nil, "'\(cancel.text)' in the French voice alone: \(label)")
        let cancelTimes = times(await watcher.timedEvents(of: cancel.id), from: 0)
        let labelWords = wordStarts(cancel.text).filter { $0 > 0 }
        let labelFrench = times(try await said(marked(cancel.text, heldIn: "fr")).timed, from: 0)
        let labelEnglish = times(try await said(marked(cancel.text, heldIn: "en")).timed, from: 0)
        let toFrench = distance(labelWords, cancelTimes, labelFrench), toEnglish = distance(labelWords, cancelTimes, labelEnglish)
        print(String(format: "Orca's '%@': its words %.3f s from the same held French, %.3f s from the same held English", cancel.text, toFrench, toEnglish))
        #expect(toFrench < toEnglish, "'\(cancel.text)' said in French (\(toFrench) s) rather than English (\(toEnglish) s)")
        await daemon.shutDown()
    }
}
