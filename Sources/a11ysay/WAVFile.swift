import Foundation

/// A RIFF/WAVE file of signed 16-bit little-endian PCM.
enum WAVFile {
    static func data(pcm: Data, sampleRate: Int, channels: Int) -> Data {
        var header = Data()
        func append(_ text: String) { header.append(contentsOf: Array(text.utf8)) }
        func append32(_ value: Int) { withUnsafeBytes(of: UInt32(value).littleEndian) { header.append(contentsOf: $0) } }
        func append16(_ value: Int) { withUnsafeBytes(of: UInt16(value).littleEndian) { header.append(contentsOf: $0) } }
        let blockAlign = channels * 2
        append("RIFF"); append32(36 + pcm.count); append("WAVE")
        append("fmt "); append32(16); append16(1); append16(channels)
        append32(sampleRate); append32(sampleRate * blockAlign); append16(blockAlign); append16(16)
        append("data"); append32(pcm.count)
        return header + pcm
    }
}
