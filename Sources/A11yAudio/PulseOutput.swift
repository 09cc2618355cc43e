// Filled by the audio work: PulseOutput conforms to A11yCore.AudioOutput.
import A11yCore
