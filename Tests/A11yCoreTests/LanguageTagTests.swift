// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11yTestSupport
import Testing

/// Every language a11yd is given is read by one rule, whatever its source.
@Suite struct LanguageTagTests {
    @Test(arguments: [
        ("fr", "fr"), ("fr-FR", "fr-fr"), ("fr_FR", "fr-fr"), ("fr_FR.UTF-8@euro", "fr-fr"), ("  en-GB ", "en-gb"),
        ("sr@latin", "sr"), ("C", "c"), ("zh-Hant-TW", "zh-hant-tw"),
    ])
    func normalized(_ text: String, _ tag: String) {
        #expect(same(LanguageTag.normalized(text), tag))
    }

    @Test func blankIsNone() {
        #expect(LanguageTag.normalized("") == nil && LanguageTag.normalized("   ") == nil && LanguageTag.normalized(".UTF-8") == nil)
        #expect(same(LanguageTag.base(""), ""))
    }

    @Test(arguments: [
        ("en-GB", "en"), ("fr_FR.UTF-8", "fr"), ("en_US.UTF-8", "en"), ("DE", "de"), ("EN", "en"), ("sr@latin", "sr"),
        ("fr-be", "fr"), ("en", "en"), ("", ""),
    ])
    func base(_ text: String, _ base: String) {
        #expect(same(LanguageTag.base(text), base))
    }

    /// An engine's answers by tag are kept, and a client naming ever new tags cannot grow them past
    /// the bound.
    @Test func resolvedVoicesAreKeptByTagAndBounded() {
        var resolved = ResolvedVoices()
        resolved.remember("fr", for: "fr-fr")
        #expect(same(resolved[tag: "fr-fr"], "fr"))
        #expect(resolved[tag: "fr"] == nil)
        for n in 0..<ResolvedVoices.limit { resolved.remember("x", for: "x-\(n)") }
        #expect(resolved[tag: "fr-fr"] == nil, "started again empty past the bound")
        #expect(same(resolved[tag: "x-\(ResolvedVoices.limit - 1)"], "x"), "the last is kept")
    }
}
