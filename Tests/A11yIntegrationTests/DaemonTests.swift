// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yDaemon
import A11yProtocol
import A11yTestSupport
import Foundation
import Testing

/// The daemon end to end: socket, queue, real eSpeak-NG, real PulseAudio, recorded monitor.
@Suite(.serialized) struct DaemonTests {
    @Test func speaksThroughPulseAudioAndFinishesSpoken() async throws {
        let daemon = try await DaemonHarness()
        let recorder = try daemon.recorder()
        let client = try await daemon.client()
        let id = try await client.post(.say("bonjour tout le monde"))
        let finished = try await client.finished(id)
        try await Task.sleep(for: .milliseconds(100))
        let recording = recorder.stop()
        #expect(finished.successful == true)
        #expect(finished.reason == .spoken)
        #expect(finished.text == "bonjour tout le monde")
        #expect(recording.rms() > 0.02, "speech reached the null sink")
        let words = await client.events(of: id).filter { $0.event == "word" }.compactMap(\.start)
        // eSpeak's French reads "tout le monde" as one phrase and reports no WORD event for "le"
        // and "monde"; what is reported must be real word starts, in order, from the first.
        #expect(words.first == 0 && words.count >= 2)
        #expect(words == words.sorted() && Set(words).isSubset(of: [0, 8, 13, 16]))
        #expect(await client.events(of: id).first?.event == "started")
        await daemon.shutDown()
    }

    @Test func theSocketAndItsFolderAreTheOwnersOnly() async throws {
        let daemon = try await DaemonHarness()
        let folder = (daemon.socketPath as NSString).deletingLastPathComponent
        let folderMode = try #require(try FileManager.default.attributesOfItem(atPath: folder)[.posixPermissions] as? Int)
        let socketMode = try #require(try FileManager.default.attributesOfItem(atPath: daemon.socketPath)[.posixPermissions] as? Int)
        #expect(folderMode == 0o700, "folder \(String(folderMode, radix: 8))")
        #expect(socketMode == 0o600, "socket \(String(socketMode, radix: 8))")
        // Bound under a private name and linked to its path: only the socket itself is left.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["socket"])
        await daemon.shutDown()
    }

    @Test func badLinesGetErrorsAndTheConnectionStaysUsable() async throws {
        let daemon = try await DaemonHarness()
        let client = try await daemon.client()
        try await client.sendRaw("this is not json\n")
        let notJSON = try await client.waitFor("bad_json") { $0.ok == false }
        #expect(notJSON.error?.code == "bad_json")
        try await client.sendRaw(#"{"op":"fly","id":2}"# + "\n")
        let unknown = try await client.waitFor("unknown op") { $0.id == .number(2) }
        #expect(unknown.error?.code == "unknown_op")
        try await client.sendRaw(#"{"op":"post","id":3,"text":"x","rate":7}"# + "\n")
        let range = try await client.waitFor("rate range") { $0.id == .number(3) }
        #expect(range.error?.code == "invalid_request")
        #expect(range.error?.message.contains("rate") == true)
        try await client.sendRaw(#"{"op":"post","id":4,"text":"x","lang":"xx-YY"}"# + "\n")
        let voice = try await client.waitFor("unknown voice") { $0.id == .number(4) }
        #expect(voice.error?.code == "unknown_voice")
        try await client.sendRaw(#"{"op":"post","id":5,"text":42}"# + "\n")
        let type = try await client.waitFor("wrong type") { $0.id == .number(5) }
        #expect(type.error?.code == "invalid_request")
        try await client.sendBytes(Array(#"{"op":"post","id":7,"text":"caf"#.utf8) + [0xE9] + Array("\"}\n".utf8))
        let latin1 = try await client.waitFor("invalid UTF-8") { $0.error?.code == "bad_utf8" }
        #expect(latin1.ok == false)
        // And a good line still works on the same connection.
        try await client.sendRaw(#"{"op":"post","id":6,"text":"encore"}"# + "\n")
        let good = try await client.waitFor("good post") { $0.id == .number(6) }
        #expect(good.ok == true)
        let finished = try await client.finished(try #require(good.utterance))
        #expect(finished.successful == true)
        await daemon.shutDown()
    }

    @Test func literalMarkupInTextIsSpokenAsText() async throws {
        let daemon = try await DaemonHarness()
        let client = try await daemon.client()
        let id = try await client.post(.say("<speak>bonjour</speak> [[a]] &amp;"))
        let finished = try await client.finished(id)
        #expect(finished.successful == true)
        let words = await client.events(of: id).filter { $0.event == "word" }.compactMap(\.start)
        // Had '<speak>' been read as SSML, no word would start inside it; here "speak" is a word.
        #expect(words.contains { $0 <= 1 }, "the characters of '<speak>' are spoken as a word: \(words)")
        await daemon.shutDown()
    }

    @Test func spansChangeVoiceAndPronunciationAndBadSpansAreRefused() async throws {
        let daemon = try await DaemonHarness()
        let client = try await daemon.client()
        // The seed's example: "blablabla" said with the IPA an iOS app would give.
        var ipa = Post.say("Le mot blablabla est prononcé autrement.")
        ipa.spans = [.init(start: 7, length: 9, ipa: "mɔ̃.daj.fɔ.nə.fɔ̃.ksjɔ.nə.paʀ.fɛ.tə.ˈmɑ̃")]
        let spoken = try await client.post(ipa)
        #expect(try await client.finished(spoken).successful == true)
        let words = await client.events(of: spoken).filter { $0.event == "word" }.compactMap(\.start)
        #expect(words.contains(7), "the IPA span is reported at the client's offset of 'blablabla': \(words)")
        var english = Post.say("Ouvrez le fichier README maintenant")
        english.spans = [.init(start: 18, length: 6, lang: "en")]
        #expect(try await client.finished(try await client.post(english)).successful == true)
        try await client.send(RequestLine(.pronounce(english), id: .string("show")))
        let shown = try #require(try await client.waitFor("pronounce") { $0.id == .string("show") }.ipa)
        #expect(shown.contains("(en)"), "the README span is said with an English voice: \(shown)")
        var bad = Post.say("court")
        bad.spans = [.init(start: 3, length: 10, ipa: "a")]
        try await client.send(RequestLine(.post(bad), id: .string("bad")))
        #expect(try await client.waitFor("bad span") { $0.id == .string("bad") }.error?.code == "invalid_request")
        var unknownSymbol = Post.say("bonjour")
        unknownSymbol.spans = [.init(start: 0, length: 7, ipa: "bɔ̃ǂuʁ")]
        try await client.send(RequestLine(.post(unknownSymbol), id: .string("ipa")))
        #expect(try await client.waitFor("bad ipa") { $0.id == .string("ipa") }.error?.code == "invalid_ipa")
        await daemon.shutDown()
    }

    @Test func spellOutAndPunctuationSpansChangeWhatIsSaid() async throws {
        let daemon = try await DaemonHarness()
        let client = try await daemon.client()
        let spell = Post(text: "la SNCF", spans: [.init(start: 3, length: 4, spellOut: true)])
        try await client.send(RequestLine(.pronounce(spell), id: .string("spell")))
        let letters = try #require(try await client.waitFor("spell") { $0.id == .string("spell") }.ipa)
        #expect(letters.contains("ˈɛs ˈɛn sˈe ˈɛf"), "S, N, C, F by name: \(letters)")
        // Punctuation said aloud ("virgule", "point d'exclamation") makes the audio longer.
        func seconds(_ spans: [SpeechSpan]?, _ tag: String) async throws -> Double {
            let render = Post(text: "Bonjour, monde !", spans: spans)
            try await client.send(RequestLine(.render(render), id: .string(tag)))
            let reply = try await client.waitFor(tag) { $0.id == .string(tag) }
            let audio = try #require(reply.audio)
            return Double(audio.samples.count) / Double(audio.format.sampleRate)
        }
        let plain = try await seconds(nil, "plain")
        let spoken = try await seconds([.init(start: 0, length: 16, punctuation: true)], "punctuation")
        #expect(spoken > plain + 0.25, "\(spoken) s with punctuation vs \(plain) s")
        await daemon.shutDown()
    }

    @Test func ssmlIsTranslatedMarksAreToldAndBadSSMLIsRefused() async throws {
        let daemon = try await DaemonHarness()
        let client = try await daemon.client()
        var post = Post()
        post.ssml = #"<speak xml:lang="fr">Appelez le <say-as interpret-as="telephone">06.11.22.33.06</say-as><mark name="après"/> maintenant.</speak>"#
        let id = try await client.post(post)
        let finished = try await client.finished(id)
        #expect(finished.successful == true)
        #expect(finished.text?.contains("zéro six, onze, vingt-deux, trente-trois, zéro six") == true, "\(finished.text ?? "")")
        let events = await client.events(of: id)
        let markIndex = try #require(events.firstIndex { $0.event == "mark" && $0.name == "après" })
        #expect(events[..<markIndex].contains { $0.event == "word" }, "words before the mark come before it")
        #expect(events[markIndex...].contains { $0.event == "word" }, "and 'maintenant' after it")
        let hostile = Post(ssml: #"<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">]><speak>&lol;</speak>"#)
        try await client.send(RequestLine(.post(hostile), id: .string("hostile")))
        #expect(try await client.waitFor("hostile") { $0.id == .string("hostile") }.error?.code == "invalid_ssml")
        try await client.send(RequestLine(.post(Post(ssml: "<speak>bonjour")), id: .string("unclosed")))
        #expect(try await client.waitFor("unclosed") { $0.id == .string("unclosed") }.error?.code == "invalid_ssml")
        await daemon.shutDown()
    }

    @Test func s1TenQueuedAnnouncementsAreSpokenInOrder() async throws {
        let daemon = try await DaemonHarness()
        let client = try await daemon.client()
        var ids: [UInt64] = []
        for n in 1...10 {
            ids.append(try await client.post(.say("phrase numéro \(n) de la voix synthétisée.", queue: true, rate: 1)))
        }
        _ = try await client.finished(ids.last!, timeout: .seconds(60))
        let finishes = await client.finishes()
        #expect(finishes.map(\.0) == ids)
        #expect(finishes.allSatisfy { $0.1 == .spoken })
        await daemon.shutDown()
    }

    @Test func s2NewAnnouncementInterruptsTheSpeakingOne() async throws {
        let daemon = try await DaemonHarness()
        let client = try await daemon.client()
        let a = try await client.post(.say(longSentence))
        try await client.waitFor("A's first word") { $0.event == "word" && $0.utterance == a }
        let b = try await client.post(.say("deuxième annonce"))
        let aFinished = try await client.finished(a)
        let bFinished = try await client.finished(b)
        #expect(aFinished.reason == .interrupted && aFinished.successful == false)
        #expect(bFinished.reason == .spoken)
        await daemon.shutDown()
    }

    @Test func s3QueuedAnnouncementWaitsForTheSpeakingOne() async throws {
        let daemon = try await DaemonHarness()
        let client = try await daemon.client()
        let a = try await client.post(.say("première annonce, entière", rate: 0.8))
        try await client.waitFor("A started") { $0.event == "started" && $0.utterance == a }
        let b = try await client.post(.say("seconde annonce", queue: true))
        _ = try await client.finished(b)
        #expect(await client.finishes().map(\.0) == [a, b])
        #expect(await client.finishes().map(\.1) == [.spoken, .spoken])
        await daemon.shutDown()
    }

    @Test func s4ScreenChangeInterruptsFlushesPlaysEarconThenSpeaks() async throws {
        let daemon = try await DaemonHarness()
        let client = try await daemon.client()
        let a = try await client.post(.say(longSentence))
        try await client.waitFor("A's first word") { $0.event == "word" && $0.utterance == a }
        let q1 = try await client.post(.say("file un", queue: true))
        let q2 = try await client.post(.say("file deux", queue: true))
        let recorder = try daemon.recorder()
        let s = try await client.post(.say("écran des réglages", kind: .screenChanged))
        let sFinished = try await client.finished(s)
        let recording = recorder.stop()
        let reasons = Dictionary(uniqueKeysWithValues: await client.finishes().map { ($0.0, $0.1) })
        #expect(reasons[a] == .interrupted)
        #expect(reasons[q1] == .flushed)
        #expect(reasons[q2] == .flushed)
        #expect(sFinished.reason == .spoken)
        // The earcon is a pure tone: its first 100 ms are loud and nearly periodic; check it is there
        // by finding audible sound before the first word of S was reported.
        #expect(recording.rms() > 0.02)
        await daemon.shutDown()
    }

    @Test func s5PageScrolledCoalesces() async throws {
        let daemon = try await DaemonHarness()
        let client = try await daemon.client()
        let p1 = try await client.post(.say("page un sur dix, " + longSentence, kind: .pageScrolled))
        try await client.waitFor("P1 first word") { $0.event == "word" && $0.utterance == p1 }
        // P2 and P3 posted in one step (a batch), as a fast scroll would post them.
        let batch = RequestLine(
            .batch([.say("page deux sur dix", kind: .pageScrolled), .say("page trois sur dix", kind: .pageScrolled)]),
            id: .string("scroll"))
        try await client.send(batch)
        let ids = try #require(try await client.waitFor("batch reply") { $0.id == .string("scroll") }.utterances)
        try #require(ids.count == 2)
        let (p2, p3) = (ids[0], ids[1])
        let p3Finished = try await client.finished(p3)
        let reasons = Dictionary(uniqueKeysWithValues: await client.finishes().map { ($0.0, $0.1) })
        #expect(reasons[p1] == .interrupted)
        #expect(reasons[p2] == .flushed)
        #expect(p3Finished.reason == .spoken)
        #expect(await client.events(of: p2).allSatisfy { $0.event == "finished" }, "P2 never started")
        await daemon.shutDown()
    }

    @Test func s6HighIsNotInterruptedByDefault() async throws {
        let daemon = try await DaemonHarness()
        let client = try await daemon.client()
        let h = try await client.post(.say("annonce importante, à entendre en entier", priority: .high, rate: 0.8))
        try await client.waitFor("H first word") { $0.event == "word" && $0.utterance == h }
        let d = try await client.post(.say("annonce ordinaire"))
        _ = try await client.finished(d)
        #expect(await client.finishes().map(\.0) == [h, d])
        #expect(await client.finishes().map(\.1) == [.spoken, .spoken])
        await daemon.shutDown()
    }

    /// How long `text` sounds when nobody pauses it, on this daemon.
    func audibleSeconds(of text: String, on daemon: DaemonHarness) async throws -> Double {
        let recorder = try daemon.recorder()
        let client = try await daemon.client()
        let id = try await client.post(.say(text))
        _ = try await client.finished(id)
        try await Task.sleep(for: .milliseconds(100))
        return recorder.stop().audibleDuration(threshold: 0.005, window: 0.02)
    }

    @Test func s7ImmediatePauseSilencesAndResumeContinuesWhereItStopped() async throws {
        let daemon = try await DaemonHarness()
        let unpaused = try await audibleSeconds(of: longSentence, on: daemon)
        let recorder = try daemon.recorder()
        let client = try await daemon.client()
        let id = try await client.post(.say(longSentence))
        try await client.waitFor("a few words in") { $0.event == "word" && $0.utterance == id && ($0.start ?? 0) > 20 }
        let pauseRequest = RequestLine(.pause(.immediate), id: .string("pause"))
        try await client.send(pauseRequest)
        let pauseReply = try await client.waitFor("pause reply") { $0.id == .string("pause") }
        #expect(pauseReply.effective == true)
        try await client.waitFor("paused event") { $0.event == "paused" && $0.utterance == id }
        let pausedAt = recorder.elapsed()
        try await Task.sleep(for: .milliseconds(800))
        let resumedAt = recorder.elapsed()
        try await client.send(RequestLine(.resume, id: .string("resume")))
        #expect(try await client.waitFor("resume reply") { $0.id == .string("resume") }.effective == true)
        let finished = try await client.finished(id)
        try await Task.sleep(for: .milliseconds(100))
        let recording = recorder.stop()
        #expect(finished.successful == true)
        #expect(await client.events(of: id).filter { $0.event == "finished" }.count == 1)
        // Silent while paused (allow 100 ms for the cork to be heard).
        #expect(recording.rms(from: pausedAt + 0.1, to: resumedAt) < 0.003)
        // Continued, not restarted: the total audible time is close to the unpaused run.
        let total = recording.audibleDuration(threshold: 0.005, window: 0.02)
        #expect(abs(total - unpaused) < 0.15 * unpaused, "audible \(total) s vs \(unpaused) s unpaused")
        await daemon.shutDown()
    }

    @Test func s8WordPauseStopsAtTheEndOfAWordAndResumeGoesOnWithTheNext() async throws {
        let daemon = try await DaemonHarness()
        let unpaused = try await audibleSeconds(of: longSentence, on: daemon)
        let recorder = try daemon.recorder()
        let client = try await daemon.client()
        let id = try await client.post(.say(longSentence))
        try await client.waitFor("a few words in") { $0.event == "word" && $0.utterance == id && ($0.start ?? 0) > 20 }
        try await client.send(RequestLine(.pause(.word), id: .string("pause")))
        #expect(try await client.waitFor("pause reply") { $0.id == .string("pause") }.effective == true)
        try await client.waitFor("paused event") { $0.event == "paused" && $0.utterance == id }
        let pausedAt = recorder.elapsed()
        let wordsBefore = await client.events(of: id).filter { $0.event == "word" }.compactMap(\.start)
        try await Task.sleep(for: .milliseconds(600))
        let resumedAt = recorder.elapsed()
        let wordsDuringPause = await client.events(of: id).filter { $0.event == "word" }.count
        try await client.send(RequestLine(.resume))
        _ = try await client.finished(id)
        let recording = recorder.stop()
        let words = await client.events(of: id).filter { $0.event == "word" }.compactMap(\.start)
        #expect(wordsDuringPause == wordsBefore.count, "no word is reported while paused")
        #expect(recording.rms(from: pausedAt + 0.1, to: resumedAt) < 0.003)
        // Each word exactly once, in order: resume went on with the next word, nothing repeated.
        #expect(words == words.sorted() && Set(words).count == words.count)
        let expected = wordStarts(longSentence)
        #expect(words.count >= expected.count - 2, "words \(words) vs \(expected)")
        // Heard whole: paused at a word and resumed, the sentence sounds as long as unpaused.
        let total = recording.audibleDuration(threshold: 0.005, window: 0.02)
        #expect(abs(total - unpaused) < 0.05 * unpaused, "audible \(total) s vs \(unpaused) s unpaused")
        await daemon.shutDown()
    }

    /// A word pause asked during the last word: the item is spoken to its end, `finished` is its
    /// last event, and the pause is then told as the queue's (`paused` without an utterance); the
    /// next item waits for `resume`.
    @Test func s8WordPauseDuringTheLastWordHoldsTheQueueAfterFinished() async throws {
        let daemon = try await DaemonHarness()
        let client = try await daemon.client()
        let id = try await client.post(.say("bonjour"))
        let next = try await client.post(.say("ensuite", queue: true))
        try await client.waitFor("its only word") { $0.event == "word" && $0.utterance == id }
        try await client.send(RequestLine(.pause(.word), id: .string("pause")))
        #expect(try await client.waitFor("pause reply") { $0.id == .string("pause") }.effective == true)
        try await client.waitFor("the queue's pause") { $0 == .event(.queuePaused) }
        let events = await client.events(of: id).compactMap(\.event)
        #expect(events.last == "finished" && !events.contains("paused"), "\(events)")
        #expect(try await client.finished(id).reason == .spoken)
        try await Task.sleep(for: .milliseconds(300))
        #expect(await client.events(of: next).isEmpty, "the next item waits for resume")
        try await client.send(RequestLine(.resume))
        #expect(try await client.finished(next).reason == .spoken)
        await daemon.shutDown()
    }

    @Test func s9StopEndsEverythingAndSilences() async throws {
        let daemon = try await DaemonHarness()
        let recorder = try daemon.recorder()
        let client = try await daemon.client()
        let a = try await client.post(.say(longSentence))
        let q1 = try await client.post(.say("file un", queue: true))
        let q2 = try await client.post(.say("file deux", queue: true))
        try await client.waitFor("A's first word") { $0.event == "word" && $0.utterance == a }
        try await Task.sleep(for: .milliseconds(300))
        let other = try await daemon.client()  // stop acts on everyone's speech
        try await other.send(RequestLine(.stop, id: .number(1)))
        #expect(try await other.waitFor("stop reply") { $0.id == .number(1) }.effective == true)
        _ = try await client.finished(a)
        let stoppedAt = recorder.elapsed()
        try await Task.sleep(for: .milliseconds(600))
        let recording = recorder.stop()
        let reasons = Dictionary(uniqueKeysWithValues: await client.finishes().map { ($0.0, $0.1) })
        #expect(reasons[a] == .stopped && reasons[q1] == .stopped && reasons[q2] == .stopped)
        #expect(recording.rms(to: stoppedAt) > 0.02, "it was speaking")
        #expect(recording.rms(from: stoppedAt + 0.05) < 0.003, "and is silent after stop")
        await daemon.shutDown()
    }

    @Test func s10ItemsOfAClientThatLeftAreStillSpoken() async throws {
        let daemon = try await DaemonHarness()
        let watcher = try await daemon.client()
        try await watcher.send(RequestLine(.subscribe(all: true), id: .number(1)))
        try await watcher.waitFor("subscribed") { $0.id == .number(1) }
        let recorder = try daemon.recorder()
        let poster = try await daemon.client()
        let id = try await poster.post(.say("le client est parti"))
        await poster.closeWriting()
        let finished = try await watcher.finished(id)
        let recording = recorder.stop()
        #expect(finished.successful == true)
        #expect(recording.rms() > 0.02)
        await daemon.shutDown()
    }

    @Test func s11ElementIsSpokenInVoiceOverOrderWithTraitWordsInTheVoiceLanguage() async throws {
        let daemon = try await DaemonHarness()
        let client = try await daemon.client()
        var french = Post()
        french.element = AccessibilityElement(label: "Envoyer", value: "3 pièces jointes", traits: [.button, .selected], hint: "Touchez deux fois pour envoyer.")
        french.lang = "fr"
        let fr = try await client.post(french)
        var english = Post()
        english.element = AccessibilityElement(label: "Volume", value: "50 %", traits: [.adjustable, .header, .link, .image], hint: nil)
        english.lang = "en-US"
        english.queue = true
        let en = try await client.post(english)
        let frFinished = try await client.finished(fr)
        let enFinished = try await client.finished(en)
        #expect(frFinished.text == "Envoyer, 3 pièces jointes, bouton, sélectionné. Touchez deux fois pour envoyer.")
        #expect(enFinished.text == "Volume, 50 %, adjustable, heading, link, image")
        #expect(frFinished.successful == true && enFinished.successful == true)
        await daemon.shutDown()
    }

    @Test func pauseWhenIdleTakesNoEffectAndStatusReportsState() async throws {
        let daemon = try await DaemonHarness()
        let client = try await daemon.client()
        try await client.send(RequestLine(.pause(.immediate), id: .number(1)))
        #expect(try await client.waitFor("pause") { $0.id == .number(1) }.effective == false)
        try await client.send(RequestLine(.status, id: .number(2)))
        #expect(try await client.waitFor("status") { $0.id == .number(2) }.state == "idle")
        let a = try await client.post(.say(longSentence))
        _ = try await client.post(.say("ensuite", queue: true))
        try await client.waitFor("started") { $0.event == "started" && $0.utterance == a }
        try await client.send(RequestLine(.status, id: .number(3)))
        let speaking = try await client.waitFor("status") { $0.id == .number(3) }
        #expect(speaking.state == "speaking")
        #expect(speaking.current?.utterance.rawValue == a)
        #expect(speaking.queue?.map(\.text) == ["ensuite"])
        try await client.send(RequestLine(.pause(.immediate), id: .number(4)))
        try await client.waitFor("pause") { $0.id == .number(4) }
        try await client.send(RequestLine(.status, id: .number(5)))
        #expect(try await client.waitFor("status") { $0.id == .number(5) }.state == "paused")
        // A post while paused waits: it is accepted, not spoken, until resume.
        let waiting = try await client.post(.say("pendant la pause"))
        try await Task.sleep(for: .milliseconds(300))
        #expect(await client.events(of: waiting).isEmpty)
        try await client.send(RequestLine(.stop))
        _ = try await client.finished(waiting)
        await daemon.shutDown()
    }

    @Test func twoHundredPausesAndResumesNeverWedgeTheDaemon() async throws {
        let daemon = try await DaemonHarness()
        let client = try await daemon.client()
        let id = try await client.post(.say(longSentence))
        try await client.waitFor("first word") { $0.event == "word" && $0.utterance == id }
        for n in 0..<200 {
            let pause = RequestLine(.pause(n % 2 == 0 ? .immediate : .word), id: .number(2 * n))
            try await client.send(pause, RequestLine(.resume, id: .number(2 * n + 1)))
        }
        try await client.waitFor("last resume") { $0.id == .number(399) }
        let finished = try await client.finished(id, timeout: .seconds(60))
        #expect(finished.successful == true)
        // Still alive and audible afterwards.
        let recorder = try daemon.recorder()
        let next = try await client.post(.say("toujours là"))
        #expect(try await client.finished(next).successful == true)
        #expect(recorder.stop().rms() > 0.02)
        await daemon.shutDown()
    }

    @Test func survivesTheSoundServerRestarting() async throws {
        let daemon = try await DaemonHarness()
        let client = try await daemon.client()
        let id = try await client.post(.say(longSentence))
        try await client.waitFor("first word") { $0.event == "word" && $0.utterance == id }
        daemon.pulse.stop()
        try await Task.sleep(for: .milliseconds(300))
        try daemon.pulse.start()
        // The item in flight ends one way or the other, with exactly one finished.
        _ = try await client.finished(id, timeout: .seconds(30))
        let recorder = try daemon.recorder()
        let next = try await client.post(.say("le serveur de son est revenu"))
        let finished = try await client.finished(next)
        #expect(finished.successful == true)
        #expect(recorder.stop().rms() > 0.02, "sound arrives again after the restart")
        #expect(await client.events(of: id).filter { $0.event == "finished" }.count == 1)
        await daemon.shutDown()
    }
}
