// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yProtocol
import Foundation
import Testing

/// The JSON form of each speech API value a line carries: one row per case of every enum (a
/// renamed Swift case, or a new one without its wire name, fails here instead of silently changing
/// protocol v1), and the fields of each struct, as docs/protocol.md writes them. Each line reads
/// back as the value it was written from. (In `ProtocolTests`, which `make check` runs.)
extension ProtocolTests {
    static let priorities: [(Priority, String)] = [(.low, "low"), (.default, "default"), (.high, "high")]
    static let kinds: [(NotificationKind, String)] = [
        (.announcement, "announcement"), (.layoutChanged, "layoutChanged"), (.screenChanged, "screenChanged"),
        (.pageScrolled, "pageScrolled"),
    ]
    static let boundaries: [(PauseBoundary, String)] = [(.immediate, "immediate"), (.word, "word")]
    static let reasons: [(FinishReason, String)] = [
        (.spoken, "spoken"), (.interrupted, "interrupted"), (.flushed, "flushed"), (.stopped, "stopped"),
        (.dropped, "dropped"), (.error, "error"),
    ]
    static let traits: [(AccessibilityElement.Trait, String)] = [
        (.button, "button"), (.link, "link"), (.header, "header"), (.selected, "selected"),
        (.adjustable, "adjustable"), (.image, "image"), (.searchField, "searchField"), (.notEnabled, "notEnabled"),
        (.tabBar, "tabBar"), (.toggle, "toggle"),
    ]
    static let states: [(SpeechQueue.State, String)] = [(.idle, "idle"), (.speaking, "speaking"), (.paused, "paused")]

    /// `line` is exactly what `request` encodes to, and decodes back to it.
    func expectLine(_ request: RequestLine, _ line: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(LineCodec.encodeString(request) == line, sourceLocation: sourceLocation)
        #expect(try LineCodec.decodeRequest(Array(line.utf8)).get() == request, sourceLocation: sourceLocation)
    }

    /// `line` is exactly what `message` encodes to, and decodes back to it.
    func expectLine(_ message: ServerMessage, _ line: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(LineCodec.encodeString(message) == line, sourceLocation: sourceLocation)
        #expect(try LineCodec.decodeMessage(Array(line.utf8)) == message, sourceLocation: sourceLocation)
    }

    @Test func everyCaseHasItsRow() {
        #expect(Self.priorities.map(\.0) == Priority.allCases)
        #expect(Self.kinds.map(\.0) == NotificationKind.allCases)
        #expect(Self.boundaries.map(\.0) == PauseBoundary.allCases)
        #expect(Self.reasons.map(\.0) == FinishReason.allCases)
        #expect(Self.traits.map(\.0) == AccessibilityElement.Trait.allCases)
        #expect(Self.states.map(\.0) == SpeechQueue.State.allCases)
    }

    /// `CoreTypes+Wire.swift` gives the core's values their JSON form on A11yCore's promise to declare
    /// none: a conformance there would silently win over the protocol's (Swift only warns), and at run
    /// time every test binary here links both modules, so the promise is checked in the source.
    @Test func theCoreDeclaresNoWireForm() throws {
        let core = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/A11yCore")
        let files = try FileManager.default.contentsOfDirectory(atPath: core.path).filter { $0.hasSuffix(".swift") }
        #expect(files.count > 10, "\(core.path)")
        for file in files {
            let code = try String(contentsOf: core.appendingPathComponent(file), encoding: .utf8)
                .split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
            for line in code where line.contains("Codable") || line.contains("Encodable") || line.contains("Decodable") {
                Issue.record("Sources/A11yCore/\(file): \(line)")
            }
        }
    }

    @Test(arguments: priorities)
    func aPriorityIsWrittenByItsName(_ priority: Priority, _ name: String) throws {
        try expectLine(RequestLine(.post(Post(text: "x", priority: priority))), #"{"op":"post","priority":"\#(name)","text":"x"}"#)
    }

    @Test(arguments: kinds)
    func aKindIsWrittenByItsName(_ kind: NotificationKind, _ name: String) throws {
        try expectLine(RequestLine(.post(Post(text: "x", kind: kind))), #"{"kind":"\#(name)","op":"post","text":"x"}"#)
    }

    @Test(arguments: boundaries)
    func aPauseBoundaryIsWrittenByItsName(_ boundary: PauseBoundary, _ name: String) throws {
        try expectLine(RequestLine(.pause(boundary)), #"{"at":"\#(name)","op":"pause"}"#)
    }

    @Test(arguments: reasons)
    func aFinishReasonIsWrittenByItsName(_ reason: FinishReason, _ name: String) throws {
        try expectLine(
            .event(.finished(UtteranceID(rawValue: 9), text: "t", reason: reason, message: nil)),
            #"{"event":"finished","reason":"\#(name)","successful":\#(reason == .spoken),"text":"t","utterance":9}"#)
    }

    @Test(arguments: traits)
    func aTraitIsWrittenByItsName(_ trait: AccessibilityElement.Trait, _ name: String) throws {
        try expectLine(
            RequestLine(.post(Post(element: AccessibilityElement(traits: [trait])))), #"{"element":{"traits":["\#(name)"]},"op":"post"}"#)
    }

    @Test(arguments: states)
    func aQueueStateIsWrittenByItsName(_ state: SpeechQueue.State, _ name: String) throws {
        try expectLine(
            .reply(.status(ServerMessage.Status(SpeechStatus(state: state, current: nil, pending: []))), to: nil),
            #"{"ok":true,"queue":[],"state":"\#(name)","version":1}"#)
    }

    @Test func anElementWritesEachFieldItHas() throws {
        try expectLine(
            RequestLine(.post(Post(element: AccessibilityElement(label: "OK", value: "on", traits: [.button, .selected], hint: "h"))), id: .number(1)),
            #"{"element":{"hint":"h","label":"OK","traits":["button","selected"],"value":"on"},"id":1,"op":"post"}"#)
    }

    @Test func spansWriteEachFieldTheyHave() throws {
        let spans = [
            SpeechSpan(start: 0, length: 2, ipa: "ʃa"),
            SpeechSpan(start: 3, length: 1, lang: "fr", spellOut: true, punctuation: false),
        ]
        try expectLine(
            RequestLine(.post(Post(text: "ab c", spans: spans))),
            #"{"op":"post","spans":[{"ipa":"ʃa","length":2,"start":0},{"lang":"fr","length":1,"punctuation":false,"spellOut":true,"start":3}],"text":"ab c"}"#)
    }

    @Test func voicesWriteEachFieldTheyHave() throws {
        let voices = [
            VoiceInfo(identifier: "fr", name: "French (France)", languages: ["fr-fr", "fr"]),
            VoiceInfo(
                identifier: "piper:en_US-joe-medium", name: "Joe", languages: ["en-us"], engine: "piper", quality: "medium",
                problem: "no model"),
        ]
        try expectLine(
            .reply(.voices(voices), to: .string("v")),
            #"{"id":"v","ok":true,"voices":[{"engine":"espeak-ng","identifier":"fr","languages":["fr-fr","fr"],"name":"French (France)"},{"engine":"piper","identifier":"piper:en_US-joe-medium","languages":["en-us"],"name":"Joe","problem":"no model","quality":"medium"}]}"#)
    }

    @Test func utterancesAndStatusItemsWriteTheirFields() throws {
        try expectLine(
            .reply(.postedBatch([UtteranceID(rawValue: 1), UtteranceID(rawValue: UInt64.max)]), to: nil),
            #"{"ok":true,"utterances":[1,18446744073709551615]}"#)
        func item(_ id: UInt64, _ kind: NotificationKind, _ urgency: Urgency) -> SpeechItem {
            SpeechItem(
                id: UtteranceID(rawValue: id), kind: kind, urgency: urgency,
                utterance: Utterance(text: "t\(id)", segments: [], rate: 175, pitch: 50, volume: 100))
        }
        let status = SpeechStatus(
            state: .speaking, current: item(4, .screenChanged, .default(for: .screenChanged)),
            pending: [item(5, .announcement, .speechDispatcher(.progress))])
        let line = #"{"current":{"kind":"screenChanged","priority":"high","text":"t4","utterance":4},"ok":true,"queue":[{"kind":"announcement","priority":"low","text":"t5","utterance":5}],"state":"speaking","version":1}"#
        try expectLine(.reply(.status(ServerMessage.Status(status)), to: nil), line)
    }

    /// `status` says where the sound server stands, and a client reads it back, reason and all.
    @Test func statusSaysWhereTheSoundServerStands() throws {
        let unreachable = SoundServerStatus(server: "unix:/run/user/1000/pulse/native", state: .unreachable, reason: "no such socket")
        let status = SpeechStatus(state: .idle, current: nil, pending: [], audio: unreachable)
        let line = #"{"audio":{"reason":"no such socket","server":"unix:/run/user/1000/pulse/native","state":"unreachable"},"ok":true,"queue":[],"state":"idle","version":1}"#
        try expectLine(.reply(.status(ServerMessage.Status(status)), to: nil), line)
        let audio = try #require(ServerMessage.Status(status).audio)
        #expect(audio.sentence == "no sound server reachable at unix:/run/user/1000/pulse/native (no such socket)")
        let connected = ServerMessage.AudioStatus(SoundServerStatus(server: "/run/user/1000/pulse/native", state: .connected))
        #expect(connected.sentence == "connected to /run/user/1000/pulse/native")
    }

    /// A value the wire form does not have is refused with the sentence clients have always been
    /// sent (they may show it): the field's path, and for an unknown name the type and the name.
    @Test(arguments: [
        (#"{"op":"post","text":"x","priority":"urgent"}"#, "'priority' has an invalid value: Cannot initialize Priority from invalid String value urgent"),
        (#"{"op":"post","text":"x","kind":"shout"}"#, "'kind' has an invalid value: Cannot initialize NotificationKind from invalid String value shout"),
        (#"{"op":"pause","at":"sentence"}"#, "'at' has an invalid value: Cannot initialize PauseBoundary from invalid String value sentence"),
        (#"{"op":"post","element":{"traits":["button","blink"]}}"#, "'element.traits.[1]' has an invalid value: Cannot initialize Trait from invalid String value blink"),
        (#"{"op":"post","element":{"label":"OK"}}"#, "missing 'traits' in 'element'"),
        (#"{"op":"post","text":"x","priority":3}"#, "'priority' has the wrong type (expected String)"),
        (#"{"op":"post","text":"x","spans":[{"start":0,"ipa":"a"}]}"#, "missing 'length' in 'spans.[0]'"),
    ])
    func aValueTheWireFormLacksIsRefusedNamingTheField(line: String, message: String) {
        guard case .failure(let failure) = LineCodec.decodeRequest(Array(line.utf8)) else {
            Issue.record("accepted \(line)")
            return
        }
        #expect(failure.error == ServerMessage.WireError(code: "invalid_request", message: message))
    }
}
