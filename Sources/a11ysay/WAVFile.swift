// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
import A11ySystem
import SystemPackage

/// A RIFF/WAVE file of signed 16-bit little-endian PCM.
enum WAVFile {
    static func bytes(_ audio: RenderedAudio) -> [UInt8] {
        let channels = audio.format.channels
        let sampleRate = audio.format.sampleRate
        let dataSize = audio.samples.count * 2
        var bytes: [UInt8] = []
        bytes.reserveCapacity(44 + dataSize)
        func append32(_ value: Int) { withUnsafeBytes(of: UInt32(truncatingIfNeeded: value).littleEndian) { bytes += $0 } }
        func append16(_ value: Int) { withUnsafeBytes(of: UInt16(truncatingIfNeeded: value).littleEndian) { bytes += $0 } }
        bytes += Array("RIFF".utf8)
        append32(36 + dataSize)
        bytes += Array("WAVEfmt ".utf8)
        append32(16)
        append16(1)  // PCM
        append16(channels)
        append32(sampleRate)
        append32(sampleRate * channels * 2)
        append16(channels * 2)
        append16(16)
        bytes += Array("data".utf8)
        append32(dataSize)
        for sample in audio.samples { withUnsafeBytes(of: sample.littleEndian) { bytes += $0 } }
        return bytes
    }

    /// Writes the file (created as fopen's "wb" would: 0666 less the umask); the system's error
    /// when it cannot.
    static func write(_ audio: RenderedAudio, to path: String) -> Errno? {
        do {
            try SystemCall.typed {
                let file = try FileDescriptor.open(
                    path, .writeOnly, options: [.create, .truncate, .closeOnExec],
                    permissions: [.ownerReadWrite, .groupReadWrite, .otherReadWrite])
                try file.closeAfter { _ = try file.writeAll(bytes(audio)) }
            }
            return nil
        } catch {
            return error
        }
    }
}
