// SPDX-License-Identifier: GPL-3.0-or-later
@testable import A11yDaemon
import A11yProtocol
import A11ySystem
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What the daemon reads of its process without Foundation: the environment, the home folder,
/// the default configuration path and its log lines' timestamps.
@Suite(.serialized) struct ProcessBasicsTests {
    @Test func theEnvironmentSnapshotIsWhatFoundationSees() {
        #expect(setenv("A11YD_TEST_EQUALS", "a=b==c", 1) == 0)
        #expect(setenv("A11YD_TEST_EMPTY", "", 1) == 0)
        defer {
            unsetenv("A11YD_TEST_EQUALS")
            unsetenv("A11YD_TEST_EMPTY")
        }
        let snapshot = Environment.snapshot()
        #expect(snapshot["A11YD_TEST_EQUALS"] == "a=b==c")
        #expect(snapshot["A11YD_TEST_EMPTY"] == "")
        #expect(snapshot == ProcessInfo.processInfo.environment)
        unsetenv("A11YD_TEST_EQUALS")
        #expect(Environment.snapshot()["A11YD_TEST_EQUALS"] == nil, "a snapshot is taken when asked")
    }

    /// The passwd entry as /etc/passwd says (this machine has no other NSS source for it).
    func homeInEtcPasswd(uid: uid_t) throws -> String? {
        let lines = try String(contentsOfFile: "/etc/passwd", encoding: .utf8).split(separator: "\n")
        let fields = lines.map { $0.split(separator: ":", omittingEmptySubsequences: false) }
        return fields.first { $0.count >= 6 && $0[2] == "\(uid)" }.map { String($0[5]) }
    }

    @Test func homeIsHOMEElseThePasswdEntry() throws {
        let expected = try #require(try homeInEtcPasswd(uid: getuid()))
        #expect(HomeFolder.current(environment: ["HOME": "/somewhere/else"]) == "/somewhere/else")
        #expect(HomeFolder.current(environment: [:]) == expected)
        #expect(HomeFolder.current(environment: ["HOME": ""]) == expected, "an empty HOME names nothing")
        #expect(HomeFolder.fromPasswd(uid: getuid()) == expected)
        // A buffer far too small for the entry: grown on ERANGE until it fits.
        #expect(HomeFolder.fromPasswd(uid: getuid(), bufferSize: 1) == expected)
        #expect(HomeFolder.fromPasswd(uid: 0, bufferSize: 0) == (try homeInEtcPasswd(uid: 0)))
        #expect(HomeFolder.fromPasswd(uid: 3_999_999_999) == nil, "no such user")
    }

    @Test func theDefaultConfigurationPath() throws {
        let home = try #require(try homeInEtcPasswd(uid: getuid()))
        #expect(DaemonConfiguration.defaultPath(environment: ["HOME": "/h"]) == "/h/.config/a11yd/a11yd.toml")
        #expect(DaemonConfiguration.defaultPath(environment: ["HOME": "/h", "XDG_CONFIG_HOME": "/x"]) == "/x/a11yd/a11yd.toml")
        #expect(DaemonConfiguration.defaultPath(environment: ["HOME": "/h", "XDG_CONFIG_HOME": ""]) == "/h/.config/a11yd/a11yd.toml")
        #expect(DaemonConfiguration.defaultPath(environment: [:]) == home + "/.config/a11yd/a11yd.toml")
    }

    @Test(arguments: [
        (0, 0, "1970-01-01T00:00:00.000"),
        (1_795_458_976, 5_000_000, "2026-11-23T18:36:16.005"),
        (1_795_458_976, 123_999_999, "2026-11-23T18:36:16.123"),
        (951_868_799, 999_999_999, "2000-02-29T23:59:59.999"),
        (253_402_300_799, 0, "9999-12-31T23:59:59.000"),
    ])
    func timestampsAreUTCWithMilliseconds(seconds: Int, nanoseconds: Int, text: String) {
        #expect(LogTimestamp.format(seconds: seconds, nanoseconds: nanoseconds) == text)
    }

    /// The text Foundation's ISO 8601 style gave before, for the same instants, whatever TZ says.
    @Test func timestampsReadAsFoundationsDid() {
        #expect(setenv("TZ", "Europe/Paris", 1) == 0)
        tzset()
        defer {
            unsetenv("TZ")
            tzset()
        }
        let style = Date.ISO8601FormatStyle().year().month().day().time(includingFractionalSeconds: true)
        for (seconds, milliseconds) in [(0, 0), (1_795_458_976, 5), (1_795_458_976, 123), (1_782_000_000, 999)] {
            let date = Date(timeIntervalSince1970: Double(seconds) + Double(milliseconds) / 1000 + 0.0002)
            #expect(LogTimestamp.format(seconds: seconds, nanoseconds: milliseconds * 1_000_000 + 200_000) == date.formatted(style))
        }
        let now = LogTimestamp.now()
        #expect(now.count == 23 && now.hasPrefix("20") && now.dropFirst(10).first == "T", "\(now)")
    }

    /// libpulse's cookie is made where libpulse looks first, owner-only, 256 bytes, its folder
    /// made too; never over one already there, nor when one is named.
    @Test func thePulseCookieIsMadeOnceWhereLibpulseLooks() throws {
        let home = try #require(mkdtemp(strdup(NSTemporaryDirectory() + "a11yd-cookie-XXXXXX")).map { String(cString: $0) })
        defer { try? FileManager.default.removeItem(atPath: home) }
        let environment = ["HOME": home, "XDG_CONFIG_HOME": home + "/config"]
        #expect(PulseCookie.prepare(environment: environment.merging(["PULSE_COOKIE": home + "/named"]) { $1 }) == nil)
        let made = try #require(PulseCookie.prepare(environment: environment))
        #expect(made == home + "/config/pulse/cookie")
        let attributes = try FileManager.default.attributesOfItem(atPath: made)
        #expect(attributes[.size] as? Int == PulseCookie.size)
        #expect((attributes[.posixPermissions] as? Int).map { $0 & 0o777 } == 0o600)
        let folder = try FileManager.default.attributesOfItem(atPath: home + "/config/pulse")
        #expect((folder[.posixPermissions] as? Int).map { $0 & 0o777 } == 0o700)
        let first = try Data(contentsOf: URL(fileURLWithPath: made))
        #expect(first.contains { $0 != 0 }, "random bytes")
        #expect(PulseCookie.prepare(environment: environment) == nil, "one is there already")
        #expect(try Data(contentsOf: URL(fileURLWithPath: made)) == first)
    }
}
