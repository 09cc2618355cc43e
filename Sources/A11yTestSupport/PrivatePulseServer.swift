// Test helpers shared by the test targets.
import A11yCore
