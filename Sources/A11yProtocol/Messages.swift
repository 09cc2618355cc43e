import A11yCore
