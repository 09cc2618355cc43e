// Filled by the engine work: EspeakEngine conforms to A11yCore.SpeechEngine.
import A11yCore
