// swift-tools-version:6.0
// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import PackageDescription

// The one package the pure rules need (A11yCore's Deque and OrderedDictionary): `make check` builds with it alone.
let collections = Package.Dependency.package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0")

let package = Package(
    name: "a11yd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "a11yd", targets: ["a11yd"]),
        .executable(name: "a11ysay", targets: ["a11ysay"]),
        .library(name: "A11yCore", targets: ["A11yCore"]),
        // For the fuzzers (Fuzz/, its own package): the parsers and the engine they drive.
        .library(name: "A11yProtocol", targets: ["A11yProtocol"]),
        .library(name: "A11yJSONLines", targets: ["A11yJSONLines"]),
        .library(name: "A11yPronunciation", targets: ["A11yPronunciation"]),
        .library(name: "A11ySSIP", targets: ["A11ySSIP"]),
        .library(name: "A11yEngine", targets: ["A11yEngine"]),
        .library(name: "A11yEngineWorker", targets: ["A11yEngineWorker"]),
        .library(name: "A11yConfiguration", targets: ["A11yConfiguration"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        collections,
        .package(url: "https://github.com/apple/swift-system.git", from: "1.8.1"),
    ],
    targets: [
        // Pure Swift: queue, priorities, utterances, events. No C, no I/O.
        .target(
            name: "A11yCore",
            dependencies: [
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "OrderedCollections", package: "swift-collections"),
            ]
        ),

        // The operating system over Glibc, one small type per concept: paths, folders, bounded file
        // reads, the environment, the home folder, named detached threads, Landlock, the allocator's
        // limits, a Unix socket's address and a blocking probe of it, posix_spawn. It imports no
        // Foundation, not even FoundationEssentials. swift-system (no Foundation either) gives it
        // `Errno`, `FileDescriptor` (which retries on EINTR) and `FilePath`; `SystemCall` retries the
        // calls swift-system has no wrapper for.
        .target(
            name: "A11ySystem",
            dependencies: ["CMalloc", "CLandlock", .product(name: "SystemPackage", package: "swift-system")]
        ),
        // Landlock's system calls and no_new_privs, which Swift cannot call (variadic syscall/prctl).
        .systemLibrary(name: "CLandlock", path: "Sources/CLandlock"),

        // a11yd's configuration file, read the same way by a11yd and a11ysay: where it is, its bounded
        // read and the strict TOML reader, and where the JSON socket is (`SocketLocation`); and
        // `TextError`, the located refusal of every text reader (TOML, SSML, PLS). It imports no
        // Foundation, not even FoundationEssentials (a11ysay links it statically, with
        // FoundationEssentials only for its JSON coding). `ConfigurationKey`: a key's name, how its
        // value is read and written, the one definition both executables read a key through.
        .target(
            name: "A11yConfiguration",
            dependencies: ["A11yCore", "A11ySystem", .product(name: "OrderedCollections", package: "swift-collections")]
        ),

        // Thin C edges.
        .systemLibrary(name: "CEspeakNG", path: "Sources/CEspeakNG"),
        .systemLibrary(name: "CPulse", path: "Sources/CPulse"),
        .systemLibrary(name: "CMalloc", path: "Sources/CMalloc"),
        // libseccomp (libseccomp-dev), for the engine worker's system-call filter.
        .systemLibrary(name: "CSeccomp", path: "Sources/CSeccomp"),
        // CLD2's C++ API (libcld2-dev) as one C function, and libexttextcat's fingerprints
        // (libexttextcat-dev): the language detector's two halves.
        .target(name: "CCLD2", path: "Sources/CCLD2", linkerSettings: [.linkedLibrary("cld2")]),
        .systemLibrary(name: "CExtTextCat", path: "Sources/CExtTextCat"),

        // eSpeak-NG behind A11yCore's SpeechEngine and A11yPronunciation's PronunciationEngine.
        .target(
            name: "A11yEngine",
            dependencies: [
                "A11yCore", "A11ySystem", "CEspeakNG",
                .product(name: "Logging", package: "swift-log"), .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // Synthesis in a sandboxed worker process (`a11yd --engine-worker`): both sides of its channel.
        .target(
            name: "A11yEngineWorker",
            dependencies: [
                "A11yCore", "A11yEngine", "A11ySystem", "CSeccomp",
                .product(name: "Logging", package: "swift-log"), .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "OrderedCollections", package: "swift-collections"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // libpulse behind A11yCore's AudioOutput protocol.
        .target(
            name: "A11yAudio",
            dependencies: [
                "A11yCore", "A11ySystem", "CPulse",
                .product(name: "Logging", package: "swift-log"), .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),

        // IPA, SSML, spans, the user's lexicon: turning what a client asked for into engine segments.
        // Knows no concrete engine: what it needs is its `PronunciationEngine` protocol.
        .target(
            name: "A11yPronunciation",
            dependencies: ["A11yCore", "A11ySystem", .product(name: "SystemPackage", package: "swift-system")]
        ),

        // Which listed language a sentence is in: CLD2 and libexttextcat behind A11yPronunciation's
        // `LanguageDetecting`, whose rules (`LanguageDecision`) are pure and live there.
        .target(name: "A11yLanguageDetection", dependencies: ["A11yCore", "A11yPronunciation", "CCLD2", "CExtTextCat"]),

        // What every front end shares: its socket, peer check, accept loop, connection loop and shutdown.
        .target(
            name: "A11yFrontEnd",
            dependencies: [
                "A11yCore", "A11ySystem",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),

        // JSON Lines protocol v1, shared by the daemon and its clients: the wire model (`RequestLine`,
        // `ServerMessage`) and its codec (`LineCodec`), and `ReplyReader`, the commonest replies read
        // without JSONDecoder for a11ysay. No NIO: a11ysay, a blocking client, links it.
        .target(name: "A11yProtocol", dependencies: ["A11yCore"]),

        // The JSON Lines front end over the speech API: server, connection, router and line framing
        // (as A11ySSIP is for SSIP).
        .target(
            name: "A11yJSONLines",
            dependencies: [
                "A11yCore", "A11yProtocol", "A11yFrontEnd",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),

        // SSIP, speech-dispatcher's protocol: a second front end over the speech API.
        .target(
            name: "A11ySSIP",
            dependencies: [
                "A11yCore", "A11yFrontEnd",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),

        .target(
            name: "A11yDaemon",
            dependencies: [
                "A11yCore", "A11yEngine", "A11yEngineWorker", "A11yAudio", "A11yPronunciation", "A11yJSONLines", "A11ySSIP", "A11yFrontEnd",
                "A11ySystem", "A11yConfiguration", "A11yLanguageDetection",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .executableTarget(
            name: "a11yd",
            dependencies: [
                "A11yDaemon", "A11yEngineWorker", "A11ySystem",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["a11yd.order"],
            // Resident memory is mostly this binary's own pages (issue 11, docs/memory.md):
            // - the standard library and FoundationEssentials linked in: less resident than the shared
            //   Swift libraries, which no other program on a desktop maps;
            // - lld, for what gold lacks: relative relocations packed (DT_RELR, glibc 2.36) instead of
            //   a 1.3 MB table read at every start, and the order file below;
            // - no dynamic symbol table of every Swift symbol (static-stdlib-args.lnk exports them all);
            // - in release, the functions a daemon runs laid out together (a11yd.order, `make order-file`),
            //   so that the kernel's 64 KiB fault-around maps them and not the code around them.
            linkerSettings: [
                .unsafeFlags([
                    "-static-stdlib", "-use-ld=lld",
                    "-Xlinker", "--no-export-dynamic", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
                ]),
                .unsafeFlags([
                    "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/Sources/a11yd/a11yd.order",
                    // Names the order file has and this build lacks are expected: it follows the code loosely.
                    "-Xlinker", "--no-warn-symbol-ordering",
                ], .when(configuration: .release)),
                .linkedLibrary("_FoundationCollections"), .linkedLibrary("_FoundationCShims"),
            ]
        ),
        // a11ysay's command line: its option table, the one definition its parser, `--help`, completion
        // scripts and man page come from. Its own parser and not swift-argument-parser's: building
        // ArgumentParser's argument set was most of a11ysay's start-up (11 M instructions, 1.3 ms of
        // CPU in the static build). Pure Swift over A11yCore: no Foundation, no I/O.
        .target(name: "A11ySayCommandLine", dependencies: ["A11yCore"]),
        .executableTarget(
            name: "a11ysay",
            dependencies: [
                "A11ySayCommandLine", "A11yProtocol", "A11yCore", "A11ySystem", "A11yConfiguration",
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            // Starts like a C program: one static executable (standard library, FoundationEssentials,
            // libstdc++ and glibc linked in), so no dynamic loader and no relocations at start-up:
            // `a11ysay --help` 0.6 ms of CPU and 101 page faults, against 2.4 ms and 313 with
            // `-static-stdlib` alone (`perf stat`, BENCHMARKS.md). The linker warns that glibc's NSS
            // functions need the machine's glibc at run time: a11ysay's own code calls one,
            // getpwuid_r (`HomeFolder`), only when HOME is unset, and glibc's built-in files module
            // answers it from /etc/passwd; the other calls it names are FoundationEssentials' own
            // (getpwuid_r, getpwnam_r, getgrgid_r, getgrnam_r: its ProcessInfo and FileManager), on
            // paths a11ysay does not take. No NIO: a blocking client, it links A11yProtocol, the wire
            // model and its codec alone (25.2 MB; NIOCore added 6.7 MB). No ArgumentParser either: its
            // command line is A11ySayCommandLine's.
            linkerSettings: [
                .unsafeFlags(["-static-executable"]),
                // Static FoundationEssentials (JSON coding) needs these two; the autolink entries miss them.
                .linkedLibrary("_FoundationCollections"), .linkedLibrary("_FoundationCShims"),
            ]
        ),

        // Pronunciation benchmark: dictionary IPA given as spans, compared with what eSpeak says; and
        // what finding a sentence's language costs (`--language-cost`).
        .executableTarget(
            name: "a11y-pronounce-bench",
            dependencies: [
                "A11yPronunciation", "A11yEngine", "A11yCore", "A11yLanguageDetection", .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // Test helpers: private PulseAudio, monitor recorder, JSON Lines client, waiting for an output.
        .target(
            name: "A11yTestSupport",
            dependencies: [
                "A11yCore", "A11yProtocol", "A11yJSONLines", "A11yAudio", "A11ySystem", "CPulse",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Sources/A11yTestSupport"
        ),

        .testTarget(name: "A11yCoreTests", dependencies: ["A11yCore", "A11yTestSupport"]),
        // a11ysay's command line: parsing, help, completion scripts and man page against the option table.
        .testTarget(name: "A11ySayCommandLineTests", dependencies: ["A11ySayCommandLine", "A11yCore"]),
        // Unit tests of the operating-system layer (paths, bounded reads, folders, environment, home).
        .testTarget(name: "A11ySystemTests", dependencies: ["A11ySystem", .product(name: "SystemPackage", package: "swift-system")]),
        // Unit tests of the configuration file: the TOML reader, and a11yd's keys read from it.
        .testTarget(name: "A11yConfigurationTests", dependencies: ["A11yConfiguration", "A11yDaemon", "A11yCore", "A11ySSIP", "A11ySystem", "A11yTestSupport"]),
        // Unit tests of the JSON Lines wire model and codec: no daemon, no socket.
        .testTarget(name: "A11yProtocolTests", dependencies: ["A11yProtocol", "A11yCore"]),
        // Unit tests of the JSON Lines framing, in NIO's decoder verifier and in a pipe channel.
        .testTarget(
            name: "A11yJSONLinesTests",
            dependencies: [
                "A11yJSONLines",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTestUtils", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "A11ySSIPTests",
            dependencies: [
                "A11ySSIP", "A11yFrontEnd", "A11yCore", "A11ySystem", "A11yTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOTestUtils", package: "swift-nio"),
            ]
        ),
        .testTarget(name: "A11yEngineTests", dependencies: ["A11yEngine", "A11yCore"]),
        .testTarget(
            name: "A11yEngineWorkerTests",
            dependencies: [
                "A11yEngineWorker", "A11yEngine", "A11yPronunciation", "A11yCore", "A11ySystem", "A11yTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOTestUtils", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "A11yPronunciationTests",
            dependencies: ["A11yPronunciation", "A11yEngine", "A11yCore", "A11ySystem", .product(name: "SystemPackage", package: "swift-system")]
        ),
        // Sentence splitting and the language decision's rules (pure), and the detectors' accuracy on
        // bench/language/sentences.tsv.
        .testTarget(
            name: "A11yLanguageDetectionTests",
            dependencies: ["A11yLanguageDetection", "A11yPronunciation", "A11yEngine", "A11yCore"]
        ),
        .testTarget(name: "A11yAudioTests", dependencies: ["A11yAudio", "A11yCore", "A11ySystem", "A11yTestSupport"]),
        // The daemon and CLI as processes: systemd units, socket activation, autospawn, signals.
        .testTarget(name: "A11yServiceTests", dependencies: ["A11yProtocol", "A11yCore", "A11yTestSupport", "A11yDaemon", "A11yEngineWorker", "A11ySystem", .product(name: "Logging", package: "swift-log")]),
        .testTarget(
            name: "A11yIntegrationTests",
            dependencies: [
                "A11yDaemon", "A11yEngineWorker", "A11yProtocol", "A11yJSONLines", "A11yCore", "A11ySSIP", "A11yFrontEnd", "A11yPronunciation", "A11ySystem", "A11yTestSupport",
                "A11yConfiguration", "A11ySayCommandLine",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// `make check`'s build: the rules that decide a11yd's behaviour without C or I/O, with their tests,
// alone, when A11YD_PURE=1 (the Makefile's CHECK_BUILD, in its own folder .build-check). It resolves
// and compiles no package but swift-collections and needs no C library. Whole targets where a target
// is pure; where pure rules share a target with C or I/O (the output's rules beside libpulse, the
// tests' seeded generator and manual clock beside their sound servers), those files alone, under the
// same module name, so that their tests compile unchanged: a file those rules come to need is added
// here. Its test binary lists exactly the suites Tests/suite-times.tsv marks `pure`
// (scripts/test-lanes.sh --pure refuses to run otherwise). The whole build ignores all this
// (docs/testing.md).
if Context.environment["A11YD_PURE"] == "1" {
    let whole: Set = ["A11yCore", "A11yCoreTests"]
    // A target's pure files, and what they need.
    let parts: [String: (files: [String], dependencies: [Target.Dependency])] = [
        "A11yAudio": (["StreamFeed.swift", "StreamPair.swift", "Track.swift", "Ramp.swift", "StreamClock.swift"], ["A11yCore"]),
        "A11yAudioTests": (
            ["StreamFeedTests.swift", "StreamPairTests.swift", "RampTests.swift", "StreamClockTests.swift"], ["A11yAudio", "A11yCore", "A11yTestSupport"]
        ),
        "A11yTestSupport": (["SplitMix64.swift", "ManualClock.swift", "Collected.swift", "TestFailure.swift", "Same.swift"], []),
    ]
    package.products = []
    package.dependencies = [collections]
    package.targets = package.targets.compactMap { target in
        if whole.contains(target.name) { return target }
        guard let part = parts[target.name] else { return nil }
        let folder = target.path ?? "\(target.isTest ? "Tests" : "Sources")/\(target.name)"
        target.sources = part.files
        // The target's other files, left out without a warning.
        target.exclude = ((try? FileManager.default.contentsOfDirectory(atPath: "\(Context.packageDirectory)/\(folder)")) ?? [])
            .filter { !part.files.contains($0) }
        target.dependencies = part.dependencies
        return target
    }
}
