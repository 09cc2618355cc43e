// SPDX-License-Identifier: GPL-3.0-or-later
import Synchronization

/// The clients connected now, over every front end that shares the count, with a hook told after
/// each change: how idle exit learns that the last client left, or that one came, without looking
/// every so often.
public final class ConnectionCount: Sendable {
    private let count = Mutex(0)
    private let onChange: @Sendable () -> Void

    public init(onChange: @escaping @Sendable () -> Void = {}) {
        self.onChange = onChange
    }

    public var current: Int { count.withLock { $0 } }

    func opened() {
        count.withLock { $0 += 1 }
        onChange()
    }

    func closed() {
        count.withLock { $0 -= 1 }
        onChange()
    }
}
