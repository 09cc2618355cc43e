// SPDX-License-Identifier: GPL-3.0-or-later
import CPulse

/// A libpulse error code (`PA_ERR_*`), as swift-system's `Errno` is for `errno`.
struct PulseError: Error, Equatable, CustomStringConvertible {
    /// The code, positive (libpulse calls return it negated).
    let code: Int32

    init(code: Int32) {
        self.code = code == .min ? .max : abs(code)
    }

    /// `pa_strerror` returns NULL for a code it does not know.
    var description: String {
        guard let text = pa_strerror(code) else { return "unknown libpulse error \(code)" }
        return String(cString: text)
    }
}
