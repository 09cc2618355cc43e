// SPDX-License-Identifier: GPL-3.0-or-later
/// One SSIP answer: `NNN-line` for each data line, then `NNN text`, every line ended by CRLF.
///
/// The codes and texts are speech-dispatcher's (its src/server/msg.h), typos included ("413 ERR PITCH TOO
/// HIGH" answers a volume too high): clients match on them. Written as one unit, so that no event can
/// fall inside a multi-line reply.
public struct SSIPReply: Sendable, Hashable, CustomStringConvertible {
    public var code: Int
    public var lines: [String]
    public var text: String

    public init(_ code: Int, _ text: String, lines: [String] = []) {
        self.code = code
        self.text = text
        self.lines = lines
    }

    /// The same reply with data lines before its final line.
    public func with(lines: [String]) -> SSIPReply {
        SSIPReply(code, text, lines: lines)
    }

    /// The reply as it goes on the wire. A data line can never break the framing: CR and LF in it
    /// (a mark name, say) become spaces.
    public var wireBytes: [UInt8] {
        var bytes: [UInt8] = []
        let prefix = Array(String(code).utf8)
        for line in lines {
            bytes += prefix
            bytes.append(UInt8(ascii: "-"))
            bytes += line.utf8.map { $0 == 13 || $0 == 10 ? UInt8(ascii: " ") : $0 }
            bytes += [13, 10]
        }
        bytes += prefix
        bytes.append(UInt8(ascii: " "))
        bytes += text.utf8
        bytes += [13, 10]
        return bytes
    }

    public var description: String { String(decoding: wireBytes, as: UTF8.self) }

    /// 2xx and 1xx: the command did what was asked.
    public var isSuccess: Bool { code < 300 }
}

extension SSIPReply {
    static let languageSet = SSIPReply(201, "OK LANGUAGE SET")
    static let prioritySet = SSIPReply(202, "OK PRIORITY SET")
    static let rateSet = SSIPReply(203, "OK RATE SET")
    static let pitchSet = SSIPReply(204, "OK PITCH SET")
    static let punctuationSet = SSIPReply(205, "OK PUNCTUATION SET")
    static let capitalLettersSet = SSIPReply(206, "OK CAP LET RECOGNITION SET")
    static let spellingSet = SSIPReply(207, "OK SPELLING SET")
    static let clientNameSet = SSIPReply(208, "OK CLIENT NAME SET")
    static let voiceSet = SSIPReply(209, "OK VOICE SET")
    static let stopped = SSIPReply(210, "OK STOPPED")
    static let paused = SSIPReply(211, "OK PAUSED")
    static let resumed = SSIPReply(212, "OK RESUMED")
    static let canceled = SSIPReply(213, "OK CANCELED")
    static let outputModuleSet = SSIPReply(216, "OK OUTPUT MODULE SET")
    static let pauseContextSet = SSIPReply(217, "OK PAUSE CONTEXT SET")
    static let volumeSet = SSIPReply(218, "OK VOLUME SET")
    static let ssmlModeSet = SSIPReply(219, "OK SSML MODE SET")
    static let notificationSet = SSIPReply(220, "OK NOTIFICATION SET")
    static let messageQueued = SSIPReply(225, "OK MESSAGE QUEUED")
    static let messageCanceled = SSIPReply(227, "OK MESSAGE CANCELED")
    static let receivingData = SSIPReply(230, "OK RECEIVING DATA")
    static let bye = SSIPReply(231, "HAPPY HACKING")
    static let lastMessage = SSIPReply(242, "OK LAST MSG SAID")
    static let clientID = SSIPReply(245, "OK CLIENT ID SENT")
    static let help = SSIPReply(248, "OK HELP SENT")
    static let voiceList = SSIPReply(249, "OK VOICE LIST SENT")
    static let moduleList = SSIPReply(250, "OK MODULE LIST SENT")
    static let got = SSIPReply(251, "OK GET RETURNED")
    static let insideBlock = SSIPReply(260, "OK INSIDE BLOCK")
    static let outsideBlock = SSIPReply(261, "OK OUTSIDE BLOCK")
    static let pitchRangeSet = SSIPReply(263, "OK PITCH RANGE SET")
    static let notImplementedButOK = SSIPReply(299, "OK BUT NOT IMPLEMENTED -- DOES NOTHING")

    static let internalError = SSIPReply(300, "ERR INTERNAL")
    static let couldNotSetPriority = SSIPReply(301, "ERR COULDNT SET PRIORITY")
    static let couldNotSetLanguage = SSIPReply(302, "ERR COULDNT SET LANGUAGE")
    static let couldNotSetRate = SSIPReply(303, "ERR COULDNT SET RATE")
    static let couldNotSetPitch = SSIPReply(304, "ERR COULDNT SET PITCH")
    static let couldNotSetPunctuation = SSIPReply(305, "ERR COULDNT SET PUNCT MODE")
    static let couldNotSetCapitalLetters = SSIPReply(306, "ERR COULDNT SET CAP LET RECOGNITION")
    static let couldNotSetSpelling = SSIPReply(308, "ERR COULDNT SET SPELLING")
    static let couldNotSetVoice = SSIPReply(309, "ERR COULDNT SET VOICE")
    static let couldNotSetClientName = SSIPReply(311, "ERR COULDNT SET CLIENT_NAME")
    static let couldNotSetOutputModule = SSIPReply(312, "ERR COULDNT SET OUTPUT MODULE")
    static let couldNotSetPauseContext = SSIPReply(313, "ERR COULDNT SET PAUSE CONTEXT")
    static let couldNotSetVolume = SSIPReply(314, "ERR COULDNT SET VOLUME")
    static let couldNotSetSSMLMode = SSIPReply(315, "ERR COULDNT SET SSML MODE")
    static let couldNotSetNotification = SSIPReply(316, "ERR COULDNT SET NOTIFICATION")
    static let alreadyInsideBlock = SSIPReply(330, "ERR ALREADY INSIDE BLOCK")
    static let alreadyOutsideBlock = SSIPReply(331, "ERR ALREADY OUTSIDE BLOCK")
    static let notAllowedInsideBlock = SSIPReply(332, "ERR NOT ALLOWED INSIDE BLOCK")
    static let couldNotSetPitchRange = SSIPReply(340, "ERR COULDNT SET PITCH RANGE")
    static let notImplemented = SSIPReply(380, "ERR NOT YET IMPLEMENTED")

    static let noMessage = SSIPReply(403, "ERR NO MESSAGE")
    static let idDoesNotExist = SSIPReply(406, "ERR ID DOESNT EXIST")
    static let unknownPriority = SSIPReply(408, "ERR UNKNOWN PRIORITY")
    static let rateTooHigh = SSIPReply(409, "ERR RATE TOO HIGH")
    static let rateTooLow = SSIPReply(410, "ERR RATE TOO LOW")
    static let pitchTooHigh = SSIPReply(411, "ERR PITCH TOO HIGH")
    static let pitchTooLow = SSIPReply(412, "ERR PITCH TOO LOW")
    static let volumeTooHigh = SSIPReply(413, "ERR PITCH TOO HIGH")
    static let volumeTooLow = SSIPReply(414, "ERR PITCH TOO LOW")
    static let pitchRangeTooHigh = SSIPReply(415, "ERR PITCH RANGE TOO HIGH")
    static let pitchRangeTooLow = SSIPReply(416, "ERR PITCH RANGE TOO LOW")
    /// Not speech-dispatcher's (it has no limit): a SPEAK body over a11yd's bound, refused whole.
    static let messageTooLong = SSIPReply(417, "ERR MESSAGE TOO LONG")

    static let invalidCommand = SSIPReply(500, "ERR INVALID COMMAND")
    static let invalidEncoding = SSIPReply(501, "ERR INVALID ENCODING")
    static let missingParameter = SSIPReply(510, "ERR MISSING PARAMETER")
    static let notANumber = SSIPReply(511, "ERR PARAMETER NOT A NUMBER")
    static let notOnOrOff = SSIPReply(513, "ERR PARAMETER NOT ON OR OFF")
    static let invalidParameter = SSIPReply(514, "ERR PARAMETER INVALID")

    /// speech-dispatcher's HELP, word for word (trailing spaces included).
    static let helpText = help.with(lines: [
        "  SPEAK           -- say text ",
        "  KEY             -- say a combination of keys ",
        "  CHAR            -- say a character ",
        "  SOUND_ICON      -- execute a sound icon ",
        "  SET             -- set a parameter ",
        "  GET             -- get a current parameter ",
        "  LIST            -- list available arguments ",
        "  HISTORY         -- commands related to history ",
        "  QUIT            -- close the connection ",
    ])
}
