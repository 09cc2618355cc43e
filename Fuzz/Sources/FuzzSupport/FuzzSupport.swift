// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// A broken invariant: printed, then a trap, which libFuzzer reports as a crash with the input.
public func require(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError("INVARIANT BROKEN: \(message())") }
}

/// The fuzz callback is synchronous; the code under test is async. Runs `body` to completion on the
/// cooperative pool and waits for it (one input at a time: libFuzzer calls from one thread).
public func blocking<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        box.value = await body()
        done.signal()
    }
    done.wait()
    return box.value!
}

/// Written once by the task, read after the semaphore: the semaphore orders the two accesses.
private final class ResultBox<T>: @unchecked Sendable {
    var value: T?
}

/// Reads a fuzz input front to back: a few bytes of choices, then the rest as the payload.
public struct FuzzInput {
    private var bytes: ArraySlice<UInt8>

    public init(_ start: UnsafePointer<UInt8>?, _ count: Int) {
        bytes = ArraySlice(UnsafeBufferPointer(start: start, count: start == nil ? 0 : count))
    }

    public var isEmpty: Bool { bytes.isEmpty }

    /// One byte of choice (0 when the input is used up).
    public mutating func byte() -> UInt8 {
        bytes.popFirst() ?? 0
    }

    /// A number from the next 8 bytes (little-endian), for huge and negative values.
    public mutating func int() -> Int {
        var value: UInt64 = 0
        for shift in 0..<8 { value |= UInt64(byte()) << (8 * UInt64(shift)) }
        return Int(truncatingIfNeeded: value)
    }

    /// Everything left.
    public mutating func rest() -> [UInt8] {
        defer { bytes = [] }
        return Array(bytes)
    }

    /// Everything left, as text (invalid UTF-8 repaired: these targets take Swift strings).
    public mutating func restAsString() -> String {
        String(decoding: rest(), as: UTF8.self)
    }
}

/// libFuzzer's entry point for a program with its own `main` (SwiftPM gives every executable one).
@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// Hands the command line to libFuzzer with `test` as the fuzz target, and exits with its status.
public func runFuzzer(_ test: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> Never {
    var argc = CommandLine.argc
    var argv = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, test))
}
