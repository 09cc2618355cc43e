// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import CEspeakNG
import SystemPackage

/// The libespeak-ng state of this process. Confined to the `EspeakWorker` thread: it is created
/// there and only ever handed to jobs running there, so it needs no lock (and is not `Sendable`).
final class EspeakSession {
    private(set) var sampleRate: Int?
    private var dataPath: String?
    /// The voice libespeak-ng currently has selected, to skip redundant switches (~4 ms the first
    /// time a voice is loaded, ~0.07 ms for a switch back).
    private var currentVoice: String?
    /// Voices as listed once (the installed set does not change under a running daemon).
    private var voiceList: [VoiceEntry]?
    /// Whether libespeak-ng's global phoneme-input option is on (set by the last `espeak_Synth`),
    /// nil when unknown.
    var phonemeInput: Bool?
    /// Every mnemonic of `phontab`, read once.
    var mnemonicList: [String]?

    init() {}

    /// Initializes libespeak-ng once per process; later calls return the same sample rate.
    func initialize(dataPath: String?) throws -> Int {
        if let sampleRate {
            guard dataPath == nil || dataPath == self.dataPath else {
                throw SpeechError(
                    .engineFailed,
                    "eSpeak-NG is already initialized with data path \(self.dataPath ?? "(default)")")
            }
            return sampleRate
        }
        // buflength 20 ms: the synth callback gets audio in small pieces, so the first chunk
        // leaves early and a cancel is noticed within one small buffer.
        let options = Int32(espeakINITIALIZE_DONT_EXIT)
        let rate: Int32
        if let dataPath {
            rate = dataPath.withCString { espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 20, $0, options) }
        } else {
            rate = espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 20, nil, options)
        }
        guard rate > 0 else {
            throw SpeechError(
                .engineFailed,
                "espeak_Initialize failed (\(rate)) with data path \(dataPath ?? "(default)")")
        }
        // One callback for the whole process; per-utterance state arrives in `user_data`.
        espeak_SetSynthCallback { wav, count, events in
            SynthesisContext.callback(wav: wav, count: Int(count), events: events)
        }
        sampleRate = Int(rate)
        self.dataPath = dataPath
        return Int(rate)
    }

    /// `espeak_Info`'s data path: the `espeak-ng-data` folder in use (known once initialized).
    func dataFolder() throws -> String {
        try requireInitialized()
        var path: UnsafePointer<CChar>?
        _ = espeak_Info(&path)
        guard let path, path.pointee != 0 else { throw SpeechError(.engineFailed, "eSpeak-NG names no data folder") }
        return String(cString: path)
    }

    func requireInitialized() throws {
        guard sampleRate != nil else { throw SpeechError(.engineFailed, "eSpeak-NG is not initialized") }
    }

    /// Selects `name` unless it is already the current voice.
    /// (eSpeak matches names case-insensitively: "en-us" and "en-US" are the same voice.)
    func selectVoice(_ name: String) throws {
        if let currentVoice, name.lowercased() == currentVoice.lowercased() { return }
        let status = name.withCString { espeak_SetVoiceByName($0) }
        guard status == EE_OK else {
            currentVoice = nil
            throw SpeechError(.unknownVoice, "no eSpeak voice named '\(name)'; run a11ysay --list-voices")
        }
        currentVoice = name
    }

    /// Sets eSpeak's parameters for a11yd's `volume` (0...200, eSpeak's own scale) and returns the
    /// gain that completes it: eSpeak itself never goes above 100, where it starts to clip; the
    /// rest is the `PeakLimiter`'s gain (200 is eSpeak 100 times 2, limited).
    @discardableResult
    func setParameters(rate: Int, pitch: Int, volume: Int) -> Double {
        let volume = min(max(volume, 0), 200)
        espeak_SetParameter(espeakRATE, Int32(min(max(rate, 80), 1000)), 0)
        espeak_SetParameter(espeakPITCH, Int32(min(max(pitch, 0), 100)), 0)
        espeak_SetParameter(espeakVOLUME, Int32(min(volume, Self.cleanVolume)), 0)
        return Double(max(volume, Self.cleanVolume)) / Double(Self.cleanVolume)
    }

    /// eSpeak's loudest volume that never clips (its peaks stay near 21,000 at 100).
    static let cleanVolume = 100

    /// Every installed voice (variants and MBROLA voices excluded, as `espeak_ListVoices(NULL)` does),
    /// with the priority of each language (lower is preferred).
    func voices() throws -> [VoiceEntry] {
        try requireInitialized()
        if let voiceList { return voiceList }
        var list: [VoiceEntry] = []
        if var entry = espeak_ListVoices(nil) {
            while let voice = entry.pointee {
                let name = voice.pointee.name.map { String(cString: $0) } ?? ""
                let path = voice.pointee.identifier.map { String(cString: $0) } ?? ""
                let languages = Self.parseLanguages(voice.pointee.languages)
                list.append(VoiceEntry(
                    info: VoiceInfo(
                        identifier: Self.voiceName(fromFile: path),
                        name: name,
                        languages: languages.map(\.name)),
                    priorities: languages.map(\.priority)))
                entry += 1
            }
        }
        voiceList = list
        return list
    }

    /// `espeak_SetVoiceByName` accepts a voice's file name without its directory ("roa/fr" → "fr").
    static func voiceName(fromFile path: String) -> String {
        FilePath(path).lastComponent?.string ?? path
    }

    /// Parses `espeak_VOICE.languages`: repeated (priority byte, NUL-terminated name), ended by a
    /// zero byte where the next priority would be. Steps over each name by its bytes up to the NUL,
    /// never by the decoded string (invalid UTF-8 decodes to more bytes than it had).
    static func parseLanguages(_ raw: UnsafePointer<CChar>?) -> [(priority: Int, name: String)] {
        guard let raw else { return [] }
        var result: [(Int, String)] = []
        var p = UnsafeRawPointer(raw).assumingMemoryBound(to: UInt8.self)
        while p.pointee != 0 {
            let priority = Int(p.pointee)
            p += 1
            var count = 0
            while p[count] != 0 { count += 1 }
            let name = String(decoding: UnsafeBufferPointer(start: p, count: count), as: UTF8.self)
            result.append((priority, name.lowercased()))
            p += count + 1
        }
        return result
    }
}
