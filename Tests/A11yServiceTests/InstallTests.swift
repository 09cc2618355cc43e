// SPDX-License-Identifier: GPL-3.0-or-later
import A11yTestSupport
import Foundation
import Testing

/// The unit files and `make install` / `make uninstall`, into temporary homes and prefixes.
@Suite(.serialized) struct InstallTests {
    @Test func unitsPassSystemdAnalyzeVerify() async throws {
        let sandbox = try Sandbox()
        // ExecStart must name an executable that exists: verify a copy with the path substituted.
        let service = try String(contentsOfFile: Binaries.packageRoot + "/systemd/a11yd.service", encoding: .utf8)
        #expect(service.contains("ExecStart=@BINDIR@/a11yd"))
        try service.replacingOccurrences(of: "@BINDIR@", with: Binaries.folder)
            .write(toFile: sandbox.root + "/a11yd.service", atomically: false, encoding: .utf8)
        try FileManager.default.copyItem(atPath: Binaries.packageRoot + "/systemd/a11yd.socket", toPath: sandbox.root + "/a11yd.socket")
        try FileManager.default.copyItem(atPath: Binaries.packageRoot + "/systemd/a11yd-ssip.socket", toPath: sandbox.root + "/a11yd-ssip.socket")
        for mode in [["--user"], []] {
            // --man=no: the man pages are not installed here (the install test checks them).
            let result = try await run(
                "/usr/bin/systemd-analyze",
                mode + ["--man=no", "verify", sandbox.root + "/a11yd.socket", sandbox.root + "/a11yd-ssip.socket", sandbox.root + "/a11yd.service"],
                environment: ["XDG_RUNTIME_DIR": sandbox.runtime, "PATH": "/usr/bin:/bin"])
            #expect(result.status == 0, "systemd-analyze \(mode) verify: \(result.stdout) \(result.stderr)")
            #expect(result.stderr.isEmpty, "no warnings: \(result.stderr)")
        }
    }

    /// Settings a user manager can apply only inside a user namespace of its own (mount, UTS, network
    /// namespaces: 226/NAMESPACE where those are refused) or only with CAP_SETPCAP, which an
    /// unprivileged manager lacks (218/CAPABILITIES). Any of them stops a11yd from starting on such
    /// machines; LiveUserManagerTests shows the start where a user manager can run.
    static let settingsThatCanFailTheStart = [
        "PrivateUsers", "ProtectSystem", "ProtectHome", "PrivateTmp", "PrivateDevices", "PrivateNetwork", "PrivateIPC",
        "PrivateMounts", "ProtectKernelTunables", "ProtectKernelModules", "ProtectKernelLogs", "ProtectControlGroups",
        "ProtectClock", "ProtectHostname", "ProtectProc", "ProcSubset", "ReadOnlyPaths", "ReadWritePaths", "InaccessiblePaths",
        "TemporaryFileSystem", "BindPaths", "BindReadOnlyPaths", "CapabilityBoundingSet", "AmbientCapabilities", "NetworkNamespacePath",
    ]

    @Test func serviceUsesNoSettingThatNeedsANamespaceOrPrivileges() throws {
        let service = try String(contentsOfFile: Binaries.packageRoot + "/systemd/a11yd.service", encoding: .utf8)
        let keys = service.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { $0.split(separator: "=").first.map(String.init) }
        let offending = keys.filter(Self.settingsThatCanFailTheStart.contains)
        #expect(offending.isEmpty, "a11yd.service sets \(offending): it would not start under an unprivileged user manager without user namespaces")
        for kept in ["NoNewPrivileges", "RestrictAddressFamilies", "SystemCallFilter", "MemoryDenyWriteExecute", "RestrictNamespaces"] {
            #expect(keys.contains(kept), "\(kept) kept: it needs no namespace")
        }
    }

    @Test func perUserInstallAndUninstall() async throws {
        let sandbox = try Sandbox()
        let home = sandbox.root + "/home"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let example = sandbox.root + "/example.toml"
        try "# example\n[daemon]\nautospawn = true\n".write(toFile: example, atomically: false, encoding: .utf8)
        let install = try await make("install", home: home, configSource: example, sandbox: sandbox)
        #expect(install.status == 0, "\(install.stdout)\n\(install.stderr)")
        let expected = [
            ".local/bin/a11yd", ".local/bin/a11ysay", ".config/systemd/user/a11yd.socket", ".config/systemd/user/a11yd.service",
            ".config/systemd/user/a11yd-ssip.socket",
            ".config/a11yd/a11yd.toml", ".local/share/doc/a11yd/a11yd.toml",
            ".local/share/bash-completion/completions/a11ysay", ".local/share/zsh/site-functions/_a11ysay",
            ".local/share/fish/vendor_completions.d/a11ysay.fish", ".local/share/man/man1/a11yd.1", ".local/share/man/man1/a11ysay.1",
            ".local/bin/a11yd-install-voices", ".local/share/man/man1/a11yd-install-voices.1",
            ".local/share/a11yd/piper/a11yd_piper_worker.py", ".local/share/a11yd/piper/a11yd_piper/__init__.py",
            ".local/share/a11yd/piper/a11yd_piper/worker.py",
        ]
        for path in expected {
            #expect(FileManager.default.fileExists(atPath: home + "/" + path), "\(path) installed")
        }
        #expect(!FileManager.default.fileExists(atPath: home + "/.local/share/a11yd/piper/a11yd_piper/test_frames.py"),
                "the worker's modules are installed without their tests")
        let unit = try String(contentsOfFile: home + "/.config/systemd/user/a11yd.service", encoding: .utf8)
        #expect(unit.contains("ExecStart=\(home)/.local/bin/a11yd\n"))
        #expect(try String(contentsOfFile: home + "/.local/share/bash-completion/completions/a11ysay", encoding: .utf8).contains("--wait"))
        // The man page renders and mentions the options.
        let page = try await run("/usr/bin/man", ["-l", "-Tutf8", home + "/.local/share/man/man1/a11ysay.1"], environment: ["PATH": "/usr/bin:/bin"])
        #expect(page.status == 0 && page.stdout.contains("wait"), "\(page.stderr)")
        // The natural voice's installer, installed, finds the worker installed beside it and says what it does.
        let installer = try await run(home + "/.local/bin/a11yd-install-voices", ["--help"], environment: ["PATH": "/usr/bin:/bin"])
        #expect(installer.status == 0 && installer.stdout.contains("--data-dir"), "\(installer)")
        let voicesPage = try await run(
            "/usr/bin/man", ["-l", "-Tutf8", home + "/.local/share/man/man1/a11yd-install-voices.1"], environment: ["PATH": "/usr/bin:/bin"])
        #expect(voicesPage.status == 0 && voicesPage.stdout.contains("virtual environment"), "\(voicesPage.stderr)")
        let wrong = try await run(home + "/.local/bin/a11yd-install-voices", ["--bogus"], environment: ["PATH": "/usr/bin:/bin"])
        #expect(wrong.status == 2, "\(wrong)")
        // The installed units verify, man pages included (found through MANPATH).
        let units = home + "/.config/systemd/user"
        let verify = try await run(
            "/usr/bin/systemd-analyze", ["--user", "verify", units + "/a11yd.socket", units + "/a11yd-ssip.socket", units + "/a11yd.service"],
            environment: ["XDG_RUNTIME_DIR": sandbox.runtime, "MANPATH": home + "/.local/share/man", "PATH": "/usr/bin:/bin"])
        #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")

        // A second install keeps the user's edited configuration.
        try "[voice]\nrate = 300\n".write(toFile: home + "/.config/a11yd/a11yd.toml", atomically: false, encoding: .utf8)
        let again = try await make("install", home: home, configSource: example, sandbox: sandbox)
        #expect(again.status == 0)
        #expect(try String(contentsOfFile: home + "/.config/a11yd/a11yd.toml", encoding: .utf8).contains("rate = 300"))

        let uninstall = try await make("uninstall", home: home, configSource: example, sandbox: sandbox)
        #expect(uninstall.status == 0, "\(uninstall.stderr)")
        for path in expected where path != ".config/a11yd/a11yd.toml" {
            #expect(!FileManager.default.fileExists(atPath: home + "/" + path), "\(path) removed")
        }
        #expect(!FileManager.default.fileExists(atPath: home + "/.local/share/a11yd/piper/a11yd_piper"), "the worker's package removed")
        #expect(FileManager.default.fileExists(atPath: home + "/.config/a11yd/a11yd.toml"), "the user's config stays")
    }

    @Test func systemWideInstallPutsUnitsInTheSystemUserUnitPath() async throws {
        let sandbox = try Sandbox()
        let home = sandbox.root + "/home"
        let prefix = sandbox.root + "/usr/local"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let example = sandbox.root + "/example.toml"
        try "# example\n".write(toFile: example, atomically: false, encoding: .utf8)
        let install = try await make("install", "PREFIX=\(prefix)", home: home, configSource: example, sandbox: sandbox)
        #expect(install.status == 0, "\(install.stdout)\n\(install.stderr)")
        for path in ["bin/a11yd", "bin/a11ysay", "lib/systemd/user/a11yd.socket", "lib/systemd/user/a11yd.service",
                     "share/man/man1/a11ysay.1", "share/doc/a11yd/a11yd.toml", "bin/a11yd-install-voices",
                     "share/a11yd/piper/a11yd_piper_worker.py", "share/a11yd/piper/a11yd_piper/worker.py",
                     "share/man/man1/a11yd-install-voices.1"] {
            #expect(FileManager.default.fileExists(atPath: prefix + "/" + path), "\(path)")
        }
        #expect(try String(contentsOfFile: prefix + "/lib/systemd/user/a11yd.service", encoding: .utf8).contains("ExecStart=\(prefix)/bin/a11yd"))
        #expect(!FileManager.default.fileExists(atPath: home + "/.config"), "nothing written to the home")
        let uninstall = try await make("uninstall", "PREFIX=\(prefix)", home: home, configSource: example, sandbox: sandbox)
        #expect(uninstall.status == 0)
        #expect(!FileManager.default.fileExists(atPath: prefix + "/bin/a11yd"))
    }

    /// `make` in the package with the test's binaries (no build) and a fake `swift` (SwiftPM is busy
    /// running these tests), so a11yd's man page comes from the --help fallback (a11ysay's from its own table).
    func make(_ target: String, _ extra: String..., home: String, configSource: String, sandbox: Sandbox) async throws
        -> (status: Int32, stdout: String, stderr: String)
    {
        try await run(
            "/usr/bin/make",
            ["-C", Binaries.packageRoot, target, "INSTALL_BUILD=", "BIN=\(Binaries.folder)", "SCRATCH=\(sandbox.root)/scratch",
             "SWIFT=/bin/false", "CONFIG_SOURCE=\(configSource)"] + extra,
            environment: ["HOME": home, "PATH": "/usr/bin:/bin", "XDG_RUNTIME_DIR": sandbox.runtime])
    }
}
