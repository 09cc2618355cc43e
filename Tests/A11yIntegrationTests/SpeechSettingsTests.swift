// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore
@testable import A11yDaemon
import A11yProtocol
import A11ySSIP
import Testing

/// A request's voice settings on eSpeak's scales, around the configured voice: the pitch an octave
/// down or up at the ends of eSpeak's 0...100, whichever front end asked for it.
@Suite struct SpeechSettingsTests {
    @Test(arguments: [
        (50, -1.0, 0), (50, -0.5, 25), (50, 0, 50), (50, 0.5, 75), (50, 1, 100),
        (40, -1, 0), (40, -0.5, 20), (40, 0, 40), (40, 0.5, 70), (40, 1, 100),
    ])
    func aPitchShiftIsPlacedAroundTheConfiguredPitch(configured: Int, octaves: Double, espeak: Int) {
        var voice = DaemonConfiguration.Voice()
        voice.pitch = configured
        let settings = SpeechSettings(voice: voice, rate: nil, pitch: PitchShift(octaves: octaves), volume: nil)
        #expect(settings.pitch == espeak)
    }

    @Test func noPitchIsTheConfiguredOne() {
        var voice = DaemonConfiguration.Voice()
        voice.pitch = 37
        #expect(SpeechSettings(voice: voice, rate: nil, pitch: nil, volume: nil).pitch == 37)
    }

    /// SSIP's PITCH and the JSON protocol's multiplier at the same shift reach eSpeak as the same pitch.
    @Test(arguments: [(-100, 0.5), (-50, 0.7071067811865476), (0, 1), (50, 1.4142135623730951), (100, 2)])
    func bothFrontEndsGiveTheSamePitch(ssip: Int, multiplier: Double) throws {
        guard case .post(let post) = try LineCodec.decodeCheckedRequest(Array(#"{"op":"post","text":"x","pitch":\#(multiplier)}"#.utf8)).get().action else {
            Issue.record("not a post")
            return
        }
        let voice = DaemonConfiguration.Voice()
        let fromJSON = SpeechSettings(voice: voice, rate: nil, pitch: post.pitch, volume: nil)
        let fromSSIP = SpeechSettings(voice: voice, rate: nil, pitch: SSIPSettings.requestPitch(ssip), volume: nil)
        #expect(fromJSON.pitch == fromSSIP.pitch, "PITCH \(ssip) and pitch \(multiplier)")
    }

    /// The rate scale: 80 wpm at its bottom, the configured rate at its middle, the configured top
    /// rate at its top (450 unless `[voice] top_rate` says up to 900); SSIP's RATE lands on the same.
    @Test(arguments: [
        (450, 0.0, 80), (450, 0.5, 175), (450, 0.75, 313), (450, 1.0, 450),
        (900, 0.5, 175), (900, 0.75, 538), (900, 1.0, 900),
    ])
    func theTopOfTheRateScaleIsTheConfiguredTopRate(top: Int, rate: Double, wordsPerMinute: Int) {
        var voice = DaemonConfiguration.Voice()
        voice.topRate = top
        #expect(SpeechSettings(voice: voice, rate: rate, pitch: nil, volume: nil).rate == wordsPerMinute)
        if rate == 1.0 {
            #expect(SpeechSettings(voice: voice, rate: SSIPSettings.requestRate(100), pitch: nil, volume: nil).rate == top, "SSIP RATE 100")
        }
    }
}
