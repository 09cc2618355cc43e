// SPDX-License-Identifier: GPL-3.0-or-later
import SystemPackage

/// The ELF interpreter this process was started with (`/lib64/ld-linux-x86-64.so.2` here): every
/// dynamically linked program is executed through it, so a Landlock rule that lets a program be
/// executed must let it be executed too.
public enum DynamicLoader {
    /// Found where the kernel mapped it: the mapping at `AT_BASE` in /proc/self/maps.
    public static var path: String? {
        guard let base = loaderBase(), let maps = try? TextFile.read("/proc/self/maps", limit: 1 << 20) else { return nil }
        let prefix = String(base, radix: 16) + "-"
        for line in maps.split(separator: "\n") where line.hasPrefix(prefix) {
            if let slash = line.firstIndex(of: "/") { return String(line[slash...]) }
            break
        }
        return nil
    }

    /// `AT_BASE` from /proc/self/auxv (pairs of native words; getauxval is not in Swift's Glibc).
    private static func loaderBase() -> UInt? {
        guard let descriptor = try? FileDescriptor.open("/proc/self/auxv", .readOnly, options: .closeOnExec) else { return nil }
        defer { try? descriptor.close() }
        var words = [UInt](repeating: 0, count: 128)
        guard let count = try? words.withUnsafeMutableBytes({ try descriptor.read(into: $0) }), count > 0 else { return nil }
        let pairs = count / (2 * MemoryLayout<UInt>.stride)
        for pair in 0..<pairs where words[2 * pair] == 7 /* AT_BASE */ {
            return words[2 * pair + 1] == 0 ? nil : words[2 * pair + 1]
        }
        return nil
    }
}
