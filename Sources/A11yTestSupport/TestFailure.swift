// SPDX-License-Identifier: GPL-3.0-or-later
/// Something a test's set-up or expectation could not get: a process that would not start, a
/// message that never came. Not a speech error: tests throw this one.
public struct TestFailure: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
