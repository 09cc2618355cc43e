// SPDX-License-Identifier: GPL-3.0-or-later
/// A UI element described the way UIKit describes it to VoiceOver.
public struct AccessibilityElement: Sendable, Equatable {
    public var label: String?
    public var value: String?
    public var traits: [Trait]
    public var hint: String?

    public init(label: String? = nil, value: String? = nil, traits: [Trait] = [], hint: String? = nil) {
        self.label = label
        self.value = value
        self.traits = traits
        self.hint = hint
    }

    /// The traits that VoiceOver says out loud (UIAccessibilityTraits).
    public enum Trait: Sendable, Hashable, CaseIterable {
        case button, link, header, selected, adjustable, image
        case searchField, notEnabled, tabBar, toggle
    }

    /// The sentence VoiceOver would speak: label, value, trait words, then the hint after a pause.
    /// Trait words follow `language` (a BCP 47 or POSIX tag); unknown languages get English.
    public func utterance(language: String) -> String {
        let words = TraitVocabulary.forLanguage(language)
        var parts: [String] = []
        for part in [label, value] {
            if let part = part?.trimmed, !part.isEmpty { parts.append(part) }
        }
        parts += traits.compactMap { words[$0] }
        var sentence = parts.joined(separator: ", ")
        if let hint = hint?.trimmed, !hint.isEmpty {
            sentence += sentence.isEmpty ? hint : ". " + hint
        }
        return sentence
    }
}

/// Trait words per language, as VoiceOver says them.
enum TraitVocabulary {
    static let english: [AccessibilityElement.Trait: String] = [
        .button: "button", .link: "link", .header: "heading", .selected: "selected",
        .adjustable: "adjustable", .image: "image", .searchField: "search field",
        .notEnabled: "dimmed", .tabBar: "tab bar", .toggle: "switch button",
    ]
    static let french: [AccessibilityElement.Trait: String] = [
        .button: "bouton", .link: "lien", .header: "en-tête", .selected: "sélectionné",
        .adjustable: "ajustable", .image: "image", .searchField: "champ de recherche",
        .notEnabled: "estompé", .tabBar: "barre d'onglets", .toggle: "bouton bascule",
    ]

    static func forLanguage(_ language: String) -> [AccessibilityElement.Trait: String] {
        LanguageTag.base(language) == "fr" ? french : english
    }
}

