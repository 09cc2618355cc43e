// swift-tools-version:6.0
// SPDX-License-Identifier: GPL-3.0-or-later
// The fuzzers (docs/fuzzing.md): one libFuzzer target per parser, built only by `make fuzz` with
// `-sanitize=fuzzer,address`, so the main package's `swift build` never sees these flags.
import Foundation
import PackageDescription

// The main package, by path: its identity is the folder the repository was cloned into.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
let a11yd = root.lastPathComponent

func fuzzer(_ name: String, _ dependencies: [Target.Dependency]) -> Target {
    .executableTarget(name: name, dependencies: ["FuzzSupport"] + dependencies)
}

let package = Package(
    name: "a11yd-fuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: root.path),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        .target(name: "FuzzSupport"),
        fuzzer("fuzz-lines", [
            .product(name: "A11yProtocol", package: a11yd), .product(name: "A11yJSONLines", package: a11yd),
            .product(name: "A11yCore", package: a11yd),
            .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOEmbedded", package: "swift-nio"),
        ]),
        fuzzer("fuzz-ssml", [
            .product(name: "A11yPronunciation", package: a11yd), .product(name: "A11yCore", package: a11yd),
        ]),
        fuzzer("fuzz-ipa", [
            .product(name: "A11yPronunciation", package: a11yd), .product(name: "A11yEngine", package: a11yd),
            .product(name: "A11yCore", package: a11yd), .product(name: "Logging", package: "swift-log"),
        ]),
        fuzzer("fuzz-ssip", [
            .product(name: "A11ySSIP", package: a11yd), .product(name: "A11yPronunciation", package: a11yd),
            .product(name: "A11yCore", package: a11yd),
            .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOEmbedded", package: "swift-nio"),
        ]),
        fuzzer("fuzz-frames", [.product(name: "A11yEngineWorker", package: a11yd), .product(name: "NIOCore", package: "swift-nio")]),
        fuzzer("fuzz-toml", [.product(name: "A11yConfiguration", package: a11yd)]),
        fuzzer("fuzz-render", [
            .product(name: "A11yProtocol", package: a11yd), .product(name: "A11yPronunciation", package: a11yd),
            .product(name: "A11yEngine", package: a11yd), .product(name: "A11yEngineWorker", package: a11yd),
            .product(name: "A11yCore", package: a11yd),
            .product(name: "Logging", package: "swift-log"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
