// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

/// Maps AVSpeechUtterance's scales, which clients use, onto eSpeak's.
///
/// rate 0...1 (0.5 normal) becomes 80 wpm ... configured rate ... configured top rate (450 by
/// default, up to 900), piecewise linear;
/// a pitch shift of -1...1 octave becomes eSpeak pitch 0...100 around the configured pitch (the
/// ends of its scale an octave down or up); volume 0...1 scales the configured volume.
struct SpeechSettings: Sendable, Equatable {
    var rate: Int
    var pitch: Int
    var volume: Int

    init(voice: DaemonConfiguration.Voice, rate: Double?, pitch: PitchShift?, volume: Double?) {
        let base = voice.rate
        if let rate {
            self.rate = rate <= 0.5
                ? Int((80 + (Double(base) - 80) * rate / 0.5).rounded())
                : Int((Double(base) + (Double(max(voice.topRate, base)) - Double(base)) * (rate - 0.5) / 0.5).rounded())
        } else {
            self.rate = base
        }
        if let pitch {
            let octaves = pitch.octaves
            let target = octaves < 0
                ? Double(voice.pitch) * (1 + octaves)
                : Double(voice.pitch) + (100 - Double(voice.pitch)) * octaves
            self.pitch = min(100, max(0, Int(target.rounded())))
        } else {
            self.pitch = voice.pitch
        }
        self.volume = volume.map { Int((Double(voice.volume) * $0).rounded()) } ?? voice.volume
    }
}

