// SPDX-License-Identifier: GPL-3.0-or-later
#if canImport(Glibc)
import Glibc
#endif

/// The time at the start of a log line when stderr is not the journal: ISO 8601 in UTC with
/// milliseconds and no zone suffix, `2026-11-23T18:37:12.110` (what Foundation's
/// `.iso8601.year().month().day().time(includingFractionalSeconds: true)` printed before), from
/// clock_gettime and gmtime_r: no calendar or time-zone machinery per line.
enum LogTimestamp {
    /// Now, from the real-time clock.
    static func now() -> String {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return format(seconds: time.tv_sec, nanoseconds: time.tv_nsec)
    }

    /// `seconds` since the epoch (UTC) and the nanoseconds after them, milliseconds truncated.
    static func format(seconds: time_t, nanoseconds: Int) -> String {
        var clock = seconds
        var parts = tm()
        guard gmtime_r(&clock, &parts) != nil else { return "\(seconds)" }
        let milliseconds = min(max(nanoseconds, 0), 999_999_999) / 1_000_000
        return padded(Int(parts.tm_year) + 1900, 4) + "-" + padded(Int(parts.tm_mon) + 1, 2) + "-" + padded(Int(parts.tm_mday), 2)
            + "T" + padded(Int(parts.tm_hour), 2) + ":" + padded(Int(parts.tm_min), 2) + ":" + padded(Int(parts.tm_sec), 2)
            + "." + padded(milliseconds, 3)
    }

    /// `value` in decimal with leading zeros up to `width` digits.
    private static func padded(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
