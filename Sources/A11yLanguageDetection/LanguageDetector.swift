// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yPronunciation
#if canImport(Glibc)
import Glibc
#endif
import CCLD2
import CExtTextCat
import Synchronization

/// The two detectors Debian has, together (docs/architecture.md, "Language detection"): CLD2
/// (libcld2), which knows the words of 80 languages and says its best three, and libexttextcat's
/// n-gram fingerprints, one per listed language, which rank exactly the user's languages. Neither
/// alone reached the targets on real text; `LanguageDecision` combines them.
///
/// Bounded: at most `LanguageDecision.maximumBytes` of a text are read (CLD2 and the fingerprint
/// both scale with the text: about 45 µs a sentence together). Values from C are checked before use.
public final class LanguageDetector: LanguageDetecting {
    /// Where Debian's libexttextcat-data puts the fingerprints (`fr.lm`).
    public static let fingerprintFolder = "/usr/share/libexttextcat"

    /// The listed languages' fingerprints (base code → libexttextcat handle), read once.
    private final class Fingerprints {
        var handles: [(language: String, handle: UnsafeMutableRawPointer)] = []
        deinit {
            for (_, handle) in handles { fp_Done(handle) }
        }
    }

    // libexttextcat's calls are plain C over handles it allocates; one lock keeps a fingerprint from
    // being read while another call frees or reads it (`evidence` is called from any task).
    private let fingerprints: Mutex<Fingerprints>
    /// The listed languages' base codes with no fingerprint (a language libexttextcat does not know,
    /// a misspelt tag): they can never be chosen, and the daemon's log says so.
    public let missing: [String]

    /// Reads the fingerprint of each listed language (`["fr", "en-GB"]`: by base code).
    public init(languages: [String], folder: String = LanguageDetector.fingerprintFolder) {
        var missing: [String] = []
        let loaded = Fingerprints()
        for tag in languages {
            let base = LanguageTag.base(tag)
            guard !base.isEmpty, base.utf8.allSatisfy({ (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) }),
                  !loaded.handles.contains(where: { $0.language == base })
            else {
                if !loaded.handles.contains(where: { $0.language == base }) { missing.append(tag) }
                continue
            }
            let path = "\(folder)/\(base).lm"
            // fp_Read writes to stderr when a file is missing: look first.
            guard access(path, R_OK) == 0, let handle = fp_Init(base) else {
                missing.append(tag)
                continue
            }
            fp_SetProperty(handle, TCPROP_UTF8AWARE, 1)
            guard fp_Read(handle, path, 400) == 1 else {
                fp_Done(handle)
                missing.append(tag)
                continue
            }
            loaded.handles.append((base, handle))
        }
        self.missing = missing
        fingerprints = Mutex(loaded)
    }

    public func evidence(for text: String) -> LanguageEvidence? {
        // Whole characters only, at most `maximumBytes` of them.
        var bytes: [UInt8] = []
        for scalar in text.unicodeScalars {
            if bytes.count + UTF8.width(scalar) > LanguageDecision.maximumBytes { break }
            bytes.append(contentsOf: String(scalar).utf8)
        }
        guard !bytes.isEmpty else { return nil }
        var result = a11y_cld2_result()
        let status = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                // No hint of the expected language: measured, it made CLD2's vote worse (it boosts
                // the expected language on exactly the texts that are not in it).
                a11y_cld2_detect(chars.baseAddress, CLong(chars.count), nil, &result)
            }
        }
        guard status == 0 else { return nil }
        let candidates = withUnsafeBytes(of: result.candidates) { raw in
            raw.bindMemory(to: a11y_cld2_candidate.self).compactMap { candidate -> LanguageEvidence.Candidate? in
                var code = candidate.code
                let language = withUnsafeBytes(of: &code) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                guard language != "un", !language.isEmpty, (0...100).contains(candidate.percent),
                      candidate.normalized_score.isFinite
                else { return nil }
                return LanguageEvidence.Candidate(
                    language: language, percent: Int(candidate.percent), score: candidate.normalized_score)
            }
        }
        let distances = fingerprints.withLock { prints -> [String: Int] in
            guard !prints.handles.isEmpty, let unknown = fp_Init("text") else { return [:] }
            defer { fp_Done(unknown) }
            fp_SetProperty(unknown, TCPROP_UTF8AWARE, 1)
            fp_SetProperty(unknown, TCPROP_MINIMUM_DOCUMENT_SIZE, 1)
            let created = bytes.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { fp_Create(unknown, $0.baseAddress, UInt32(buffer.count), 400) }
            }
            guard created == 1 else { return [:] }
            var distances: [String: Int] = [:]
            for (language, handle) in prints.handles {
                let distance = fp_Compare(handle, unknown, Int32.max)
                if distance >= 0, distance < Int32.max { distances[language] = Int(distance) }
            }
            return distances
        }
        return LanguageEvidence(candidates: candidates, reliable: result.is_reliable != 0, distances: distances)
    }
}
