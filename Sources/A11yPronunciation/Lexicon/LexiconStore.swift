// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11ySystem
import Glibc
import Synchronization
import SystemPackage

/// The lexicon files of one user and the lexicon in force.
///
/// Reads `userFile` (the one a11yd edits: `$XDG_CONFIG_HOME/a11yd/lexicon.pls`) and every `*.pls`
/// in `directory` (`$XDG_CONFIG_HOME/a11yd/lexicons/`, by name), the user's file winning ties.
/// A file that does not parse is reported and its last good version stays in force. Edits are
/// written atomically (a temporary file in the same folder, renamed over `userFile`).
public final class LexiconStore: Sendable {
    public struct Location: Sendable, Equatable {
        public var userFile: String
        public var directory: String
        public init(userFile: String, directory: String) {
            self.userFile = userFile
            self.directory = directory
        }
        /// `lexicon.pls` and `lexicons/` in a11yd's configuration folder (`$XDG_CONFIG_HOME/a11yd`).
        public init(configurationDirectory: String) {
            self.init(
                userFile: FilePath(configurationDirectory).appending("lexicon.pls").string,
                directory: FilePath(configurationDirectory).appending("lexicons").string)
        }
    }

    /// One file and the lexicon read from it (its last good version).
    public struct Source: Sendable, Equatable {
        public var path: String
        public var lexicon: Lexicon
    }

    /// At most this many files are read from `directory`.
    static let maxFiles = 64

    public let location: Location
    /// The sources in precedence order (the user's file first) and their merge.
    private let state = Mutex<(sources: [Source], merged: Lexicon)>(([], .empty))
    /// Serialises edits and reloads: read, change, write, swap.
    private let editing = Mutex(())

    /// An empty store; call `reload()` to read the files.
    public init(location: Location) {
        self.location = location
    }

    /// The lexicon in force, for `Pronouncer.plan(…, lexicon:)`.
    public var lexicon: Lexicon { state.withLock { $0.merged } }

    /// Every file in force with its entries, the user's file first (for `lexicon list`).
    public var sources: [Source] { state.withLock { $0.sources } }

    /// Reads every file again (at start and on SIGHUP). Returns the files that failed, each kept
    /// at its last good version (or left out if it never parsed); a missing user file is empty.
    @discardableResult
    public func reload() -> [LexiconFileError] {
        editing.withLock { _ in reloadFiles() }
    }

    private func reloadFiles() -> [LexiconFileError] {
        var problems: [LexiconFileError] = []
        let previous = Dictionary(sources.map { ($0.path, $0.lexicon) }, uniquingKeysWith: { a, _ in a })
        var fresh: [Source] = []
        for path in [location.userFile] + directoryFiles(&problems) {
            do {
                if let lexicon = try Self.read(path) { fresh.append(Source(path: path, lexicon: lexicon)) }
            } catch {
                problems.append(error)
                if let kept = previous[path] { fresh.append(Source(path: path, lexicon: kept)) }
            }
        }
        publish(fresh)
        return problems
    }

    /// Adds (or replaces) an entry of the user's file, after `pronouncer` has checked that it can
    /// be said (`defaultVoice` for an entry without language).
    /// - Throws: `SpeechError` `invalid_ipa`, `unknown_voice`, `invalid_request` (the entry);
    ///   `LexiconFileError` (the user's file does not parse, or cannot be written: nothing changes).
    public func add(_ entry: LexiconEntry, checkedWith pronouncer: Pronouncer, defaultVoice: String) async throws {
        try await pronouncer.check(entry, defaultVoice: defaultVoice)
        try editUserFile { $0.adding(entry) }
    }

    /// Removes `grapheme` from the user's entries for exactly `language` (nil: those for every
    /// voice). Returns the entries it was removed from.
    /// - Throws: `SpeechError(.invalidRequest)` when no such entry is in the user's file (naming
    ///   the languages it has, or the other file holding it); `LexiconFileError` as for `add`.
    @discardableResult
    public func remove(grapheme: String, language: String?) throws -> [LexiconEntry] {
        var removed: [LexiconEntry] = []
        try editUserFile { lexicon in
            let result = lexicon.removing(grapheme: grapheme, language: language)
            removed = result.removed
            return result.lexicon
        }
        guard removed.isEmpty else { return removed }
        let others = sources.flatMap { source in source.lexicon.entries.filter { $0.hasGrapheme(grapheme) }.map { (source.path, $0) } }
        var message = "no lexicon entry '\(grapheme)' for \(language.map { "'\($0)'" } ?? "every language")"
        if let (path, entry) = others.first {
            message += path == location.userFile
                ? "; there is one for \(entry.language ?? "every language")"
                : "; \(path) has one (edit that file)"
        }
        throw SpeechError(.invalidRequest, message)
    }

    // MARK: - Files

    /// Reads the user's file afresh (so a hand edit not yet reloaded is neither lost nor, if
    /// broken, overwritten), applies `change`, writes it atomically, then puts it in force.
    private func editUserFile(_ change: (Lexicon) throws -> Lexicon) throws {
        try editing.withLock { _ in
            let current = try Self.read(location.userFile) ?? .empty
            let changed = try change(current)
            guard changed != current else { return }
            try Self.writeAtomically(PLS.document(changed), to: location.userFile)
            var sources = self.sources.filter { $0.path != location.userFile }
            sources.insert(Source(path: location.userFile, lexicon: changed), at: 0)
            publish(sources)
        }
    }

    private func publish(_ sources: [Source]) {
        let merged = Lexicon(merging: sources.map(\.lexicon))
        state.withLock { $0 = (sources, merged) }
    }

    private func directoryFiles(_ problems: inout [LexiconFileError]) -> [String] {
        // No folder (or none readable): no lexicons from it, as before it is made.
        guard let names = try? Directory.names(in: location.directory) else { return [] }
        let files = names.filter { $0.hasSuffix(".pls") && !$0.hasPrefix(".") }.sorted()
        if files.count > Self.maxFiles {
            problems.append(LexiconFileError(
                path: location.directory, message: "\(files.count) lexicons; only the first \(Self.maxFiles) are read"))
        }
        return files.prefix(Self.maxFiles).map { FilePath(location.directory).appending($0).string }
    }

    /// The file's lexicon; nil when the file does not exist.
    static func read(_ path: String) throws(LexiconFileError) -> Lexicon? {
        let limit = PLS.limits.maxInputBytes
        let document: String?
        do {
            document = try TextFile.read(path, limit: limit)
        } catch {
            switch error {
            case .unreadable(let why): throw LexiconFileError(path: path, message: "cannot be read: \(why)")
            case .notARegularFile: throw LexiconFileError(path: path, message: "is not a regular file")
            case .largerThan: throw LexiconFileError(path: path, message: "is larger than \(limit) bytes")
            case .notUTF8: throw LexiconFileError(path: path, message: "is not UTF-8")
            }
        }
        guard let document else { return nil }
        return try PLS.parse(document, path: path)
    }

    /// Writes `document` to a temporary file beside `path`, flushes it to disk and renames it over
    /// `path`: a reader (or a crash) sees the old file or the new one, never half of one.
    static func writeAtomically(_ document: String, to path: String) throws(LexiconFileError) {
        let target = FilePath(path)
        let folder = target.removingLastComponent()
        do {
            try Directory.make(folder.string)
        } catch {
            throw LexiconFileError(path: path, message: "\(error)")
        }
        let name = target.lastComponent?.string ?? ""
        let temporary = folder.appending(".\(name).\(getpid()).\(UInt32.random(in: 0 ... .max)).tmp").string
        let descriptor: FileDescriptor
        do {
            descriptor = try SystemCall.typed {
                try FileDescriptor.open(
                    temporary, .writeOnly, options: [.create, .exclusiveCreate, .closeOnExec],
                    permissions: [.ownerReadWrite, .groupRead, .otherRead])
            }
        } catch {
            throw LexiconFileError(path: path, message: "cannot create \(temporary): \(error)")
        }
        var failure: String?
        do {
            try SystemCall.typed { _ = try descriptor.writeAll(document.utf8) }
        } catch {
            failure = "cannot write \(temporary): \(error)"
        }
        if failure == nil {
            do {
                _ = try SystemCall.retryingOnInterrupt { fsync(descriptor.rawValue) }
            } catch {
                failure = "cannot flush \(temporary): \(error)"
            }
        }
        try? descriptor.close()
        if failure == nil, rename(temporary, path) != 0 { failure = "cannot rename \(temporary): \(SystemCall.lastError)" }
        if let failure {
            unlink(temporary)
            throw LexiconFileError(path: path, message: failure)
        }
    }
}
