// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11ySystem
import Glibc
import OrderedCollections
import SystemPackage

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One Piper voice found on disk: `NAME.onnx` beside `NAME.onnx.json` (docs/voices.md).
public struct PiperVoice: Sendable, Equatable {
    /// The file name without `.onnx`: what SSIP lists, and the identifier after `piper:`.
    public var name: String
    public var modelPath: FilePath
    /// The language the voice speaks, lower-case with `-` ("en-us").
    public var language: String
    /// The eSpeak-NG voice its phonemes come from (the model was trained on them): what a11yd asks
    /// eSpeak for when it turns IPA spans, lexicon entries and spelled letters into this voice's phonemes.
    public var espeakVoice: String
    public var quality: String?
    /// A human name ("Joe (English, United States)").
    public var displayName: String
    /// Why it cannot speak (nil when it can).
    public var problem: String?

    public var identifier: String { SpeechEngineName.piperPrefix + name }

    public var info: VoiceInfo {
        let base = language.split(separator: "-").first.map(String.init) ?? language
        return VoiceInfo(
            identifier: identifier, name: displayName, languages: base == language ? [language] : [language, base],
            engine: SpeechEngineName.piper.rawValue, quality: quality, problem: problem)
    }
}

/// Finds the Piper voices in a list of folders, first folder first: a name found twice is the
/// first folder's (the user's own folder comes before the system's).
public enum PiperVoices {
    /// Where a11yd looks, in order: `$XDG_DATA_HOME/a11yd/voices` (default `~/.local/share`), then
    /// `a11yd/voices` in each of `$XDG_DATA_DIRS` (default `/usr/local/share:/usr/share`).
    public static func folders(environment: [String: String]) -> [FilePath] {
        dataFolders(environment: environment).map { $0.appending("voices") }
    }

    /// The `a11yd` folders of the XDG data directories, the user's first: where voices and the
    /// Piper runtime (`piper/`, installed by `make voices`) are looked for.
    public static func dataFolders(environment: [String: String]) -> [FilePath] {
        var folders: [FilePath] = []
        if let home = environment["XDG_DATA_HOME"], home.hasPrefix("/") {
            folders.append(FilePath(home))
        } else if let home = environment["HOME"], home.hasPrefix("/") {
            folders.append(FilePath(home).appending(".local/share"))
        }
        let system = environment["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share"
        folders += system.split(separator: ":").filter { $0.hasPrefix("/") }.map { FilePath(String($0)) }
        var seen = Set<FilePath>()
        return folders.map { $0.appending("a11yd") }.filter { seen.insert($0).inserted }
    }

    /// Every voice in `folders`; a voice whose description cannot be read is listed with its problem.
    public static func scan(_ folders: [FilePath]) -> [PiperVoice] {
        // By name, the first folder's first: in the order found.
        var found: OrderedDictionary<String, PiperVoice> = [:]
        for folder in folders {
            guard let names = try? Directory.names(in: folder.string) else { continue }
            for file in names.sorted() where file.hasSuffix(".onnx") {
                let name = String(file.dropLast(".onnx".count))
                guard !name.isEmpty, found[name] == nil else { continue }
                found[name] = voice(named: name, in: folder)
            }
        }
        return Array(found.values)
    }

    /// The largest `.onnx.json` a11yd reads (Piper's are ~5 KB; a multi-speaker one ~100 KB).
    static let descriptionLimit = 4 << 20

    static func voice(named name: String, in folder: FilePath) -> PiperVoice {
        let model = folder.appending(name + ".onnx")
        var voice = PiperVoice(
            name: name, modelPath: model, language: "und", espeakVoice: "", quality: nil, displayName: name, problem: nil)
        let descriptionPath = model.string + ".json"
        do {
            guard let bytes = try TextFile.bytes(descriptionPath, limit: descriptionLimit) else {
                voice.problem = "no \(name).onnx.json beside the model"
                return voice
            }
            let description = try JSONDecoder().decode(Description.self, from: Data(bytes))
            guard description.phonemeType ?? "espeak" == "espeak", let espeak = description.espeak?.voice, !espeak.isEmpty else {
                voice.problem = "\(name).onnx.json names no eSpeak voice (phoneme_type \(description.phonemeType ?? "none")): a11yd can phonemise only through eSpeak"
                return voice
            }
            voice.espeakVoice = espeak.lowercased()
            let code = description.language?.code ?? espeak
            voice.language = LanguageTag.normalized(code) ?? voice.language
            voice.quality = description.audio?.quality
            let dataset = description.dataset ?? name
            let speaker = dataset.prefix(1).uppercased() + dataset.dropFirst()
            let where_ = [description.language?.nameEnglish, description.language?.countryEnglish].compactMap { $0 }
            voice.displayName = where_.isEmpty ? speaker : "\(speaker) (\(where_.joined(separator: ", ")))"
            var info = stat()
            if stat(model.string, &info) != 0 || info.st_mode & S_IFMT != S_IFREG {
                voice.problem = "\(name).onnx is not a regular file"
            }
        } catch let failure as TextFile.Failure {
            voice.problem = "\(name).onnx.json cannot be read: \(failure)"
        } catch {
            voice.problem = "\(name).onnx.json is not a Piper voice description: \(error)"
        }
        return voice
    }

    /// The fields of a Piper `.onnx.json` a11yd reads.
    struct Description: Decodable {
        struct Audio: Decodable {
            var sampleRate: Int?
            var quality: String?
            enum CodingKeys: String, CodingKey {
                case sampleRate = "sample_rate"
                case quality
            }
        }
        struct Espeak: Decodable { var voice: String? }
        struct Language: Decodable {
            var code: String?
            var nameEnglish: String?
            var countryEnglish: String?
            enum CodingKeys: String, CodingKey {
                case code
                case nameEnglish = "name_english"
                case countryEnglish = "country_english"
            }
        }
        var audio: Audio?
        var espeak: Espeak?
        var language: Language?
        var dataset: String?
        var phonemeType: String?
        enum CodingKeys: String, CodingKey {
            case audio, espeak, language, dataset
            case phonemeType = "phoneme_type"
        }
    }
}
