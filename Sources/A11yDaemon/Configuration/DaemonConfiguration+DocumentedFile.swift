// SPDX-License-Identifier: GPL-3.0-or-later
import A11yConfiguration

extension DaemonConfiguration {
    /// The file's opening comment.
    private static let documentedFileHeader = [
        "a11yd configuration. Copy to ~/.config/a11yd/a11yd.toml (make install does, if absent).",
        "Every key is optional; the values shown are the defaults. `a11yd --config FILE` reads another",
        "file; SIGHUP (systemctl --user reload a11yd) re-reads it, and a bad file keeps the running one.",
        "This file is written from a11yd's table of keys (DaemonConfiguration+Keys.swift).",
    ]

    /// This configuration as a commented TOML file: every key of `keys`, in order, with its
    /// documentation, the values it accepts, when a change takes effect, and its value here.
    /// `DaemonConfiguration().documentedFile` is config/a11yd.toml (a test checks it), and every
    /// configuration's reads back as itself.
    public var documentedFile: String {
        var lines = Self.documentedFileHeader.map { "# " + $0 }
        var section: String?
        for key in Self.keys {
            if key.section != section {
                section = key.section
                lines += ["", "[\(TOMLWriter.key(key.section))]"]
            }
            lines += key.documentation.map { "# " + $0 }
            let when: String? =
                switch key.takesEffect {
                case .onReload: "A reload (SIGHUP) applies it at once."
                case .atNextStart: "Read at start: a reload logs the change for the next start."
                case .never: nil
                }
            if let when { lines.append("# " + (key.accepted.map { "\($0). " } ?? "") + when) }
            guard let written = key.written?(self) else { continue }
            if key.name == nil, let entries = written.table {
                // The section is the value: one line per entry.
                lines += entries.keys.compactMap { name in entries[name].map { "\(TOMLWriter.key(name)) = \(TOMLWriter.value($0))" } }
            } else if let name = key.name {
                lines.append("\(TOMLWriter.key(name)) = \(TOMLWriter.value(written))")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
