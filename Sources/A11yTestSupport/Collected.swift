// SPDX-License-Identifier: GPL-3.0-or-later
import Synchronization

/// Values gathered from concurrent code (a writer's closure, a callback), read once it is done.
public final class Collected<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])

    public init() {}

    public func append(_ value: Value) { values.withLock { $0.append(value) } }

    public var all: [Value] { values.withLock { $0 } }
}
