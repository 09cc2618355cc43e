// SPDX-License-Identifier: GPL-3.0-or-later
/// The sound that says "new screen" before a `screenChanged` item speaks: two short rising
/// tones, unlike any voice, so that a user knows the context changed before a word is heard.
public enum Earcon {
    /// PCM for the screen-change earcon at `format`'s rate (mono, s16le), about 150 ms long.
    public static func screenChanged(format: AudioFormat) -> [Int16] {
        let rate = Double(format.sampleRate)
        var samples: [Int16] = []
        for (frequency, milliseconds) in [(880.0, 60), (1318.5, 90)] {
            let count = format.frames(milliseconds: milliseconds)
            let fade = max(1, format.frames(milliseconds: 8))
            for n in 0..<count {
                // Short fades in and out so the tones start and stop without clicks.
                let envelope = min(1.0, Double(min(n, count - 1 - n)) / Double(fade))
                let phase = 2.0 * Double.pi * frequency * Double(n) / rate
                samples.append(Int16(0.35 * 32767.0 * envelope * sine(phase)))
            }
        }
        return samples
    }

    /// sin without Foundation, accurate to well under a 16-bit step.
    static func sine(_ x: Double) -> Double {
        let twoPi = 2.0 * Double.pi
        var y = x.truncatingRemainder(dividingBy: twoPi)
        if y > Double.pi { y -= twoPi }
        if y < -Double.pi { y += twoPi }
        // Taylor series around 0 on [-pi, pi], enough terms for 1e-7.
        var term = y
        var sum = y
        for k in 1...12 {
            let n = Double(2 * k)
            term *= -(y * y) / (n * (n + 1))
            sum += term
        }
        return sum
    }
}
