// SPDX-License-Identifier: GPL-3.0-or-later
#if canImport(Glibc)
import Glibc
#endif

/// A filled-in `sockaddr_un`, for the few places that talk to a Unix socket without NIO.
public struct UnixSocketAddress: Sendable {
    private var address = sockaddr_un()
    private let length: socklen_t

    /// Nil when the path does not fit. A leading '@' names an abstract socket (a NUL byte).
    public init?(path: String) {
        var bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        let isAbstract = bytes[0] == UInt8(ascii: "@")
        if isAbstract { bytes[0] = 0 }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        // A path socket's name ends at its NUL; an abstract one is exactly its bytes.
        length = isAbstract
            ? socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
            : socklen_t(MemoryLayout<sockaddr_un>.size)
    }

    public func withSockaddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        withUnsafePointer(to: address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }
}
