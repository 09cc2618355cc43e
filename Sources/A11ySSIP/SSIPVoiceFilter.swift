// SPDX-License-Identifier: GPL-3.0-or-later
/// Which voices `LIST SYNTHESIS_VOICES [language [variant]]` lists: speech-dispatcher 0.12's rule.
///
/// speech-dispatcher's server passes the two words on to its output module as sent (`parse_list` in
/// src/server/parse.c, `output_get_voices` in src/server/output.c), and the module keeps a voice when
/// (`cmd_list_voices` in src/modules/module_process.c):
/// - no language was given: every voice. A variant alone counts for nothing: the server sends the
///   module a variant only after a language.
/// - its language is the requested one, ignoring case (`fr-FR` lists a voice tagged `fr-fr`), or its
///   language cut at its first `-` is (`fr` lists `fr-fr`, `fr-be`, and `fr` itself). Nothing looser:
///   `fr-FR` does not list a voice tagged plain `fr`, `fr-CA` lists nothing when no voice is tagged
///   `fr-ca`, `en-gb` does not list `en-gb-x-rp`, and `_` is not `-`.
/// - and, if a variant was given, its variant is that one, ignoring case. A voice without a variant
///   has `none`: `none` asks for the voices without one (every voice a11yd lists).
///
/// Orca's automatic language switching relies on exactly this: it asks `fr-FR none`, and only if
/// that lists nothing, `fr none`.
struct SSIPVoiceFilter: Sendable, Equatable {
    /// What a voice without a variant is listed with, and matched as.
    static let noVariant = "none"

    /// The language asked for; nil lists every voice.
    let language: String?
    /// The variant asked for; nil when not given, or given without a language.
    let variant: String?

    init(language: String?, variant: String?) {
        self.language = language
        self.variant = language == nil ? nil : variant
    }

    /// Whether a voice of `voiceLanguage` and `voiceVariant` is listed.
    func admits(language voiceLanguage: String, variant voiceVariant: String = SSIPVoiceFilter.noVariant) -> Bool {
        guard let language else { return true }
        let primary = voiceLanguage.firstIndex(of: "-").map { voiceLanguage[..<$0] }
        guard Self.sameIgnoringASCIICase(language, voiceLanguage)
            || primary.map({ Self.sameIgnoringASCIICase(language, $0) }) == true
        else { return false }
        guard let variant else { return true }
        return Self.sameIgnoringASCIICase(variant, voiceVariant)
    }

    /// `strcasecmp`'s equality: ASCII letters only are folded, as the C library does for the bytes of
    /// a UTF-8 string (language tags and eSpeak's variant names are ASCII anyway).
    private static func sameIgnoringASCIICase(_ one: some StringProtocol, _ other: some StringProtocol) -> Bool {
        one.utf8.elementsEqual(other.utf8) { asciiLowercased($0) == asciiLowercased($1) }
    }

    private static func asciiLowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }
}
