// SPDX-License-Identifier: GPL-3.0-or-later
import A11yCore

/// A request line as the daemon carries it out: each post already the speech API's `SpeechRequest`,
/// a lexicon request its `LexiconChange`. A line is checked and converted once, as it is read
/// (`LineCodec.decodeCheckedRequest`), so that a refusal still carries the line's `id` and the
/// front end never converts it again.
public struct CheckedRequest: Sendable, Equatable {
    /// `Request`'s cases, checked: what the daemon acts on, against what a client writes (why both:
    /// at `Request`).
    public enum Action: Sendable, Equatable {
        case post(SpeechRequest)
        /// Posts that reach the queue in one step (`Request.batch`).
        case batch([SpeechRequest])
        case pause(PauseBoundary)
        case resume
        case stop
        case status
        case voices
        case subscribe(all: Bool)
        case pronounce(SpeechRequest)
        case render(SpeechRequest)
        case lexicon(LexiconChange)
    }

    public var id: RequestID?
    public var action: Action

    public init(_ action: Action, id: RequestID? = nil) {
        self.action = action
        self.id = id
    }
}

extension RequestLine {
    /// The line for the speech API, once what decoding cannot check (ranges, combinations, a
    /// batch's size) holds.
    public func checked() throws(SpeechError) -> CheckedRequest {
        let action: CheckedRequest.Action
        switch request {
        case .post(let post): action = .post(try post.speechRequest())
        case .batch(let posts): action = .batch(try Self.check(posts))
        case .pronounce(let post): action = .pronounce(try post.speechRequest())
        case .render(let post): action = .render(try post.speechRequest())
        case .lexicon(let lexicon): action = .lexicon(try lexicon.change())
        case .pause(let boundary): action = .pause(boundary)
        case .resume: action = .resume
        case .stop: action = .stop
        case .status: action = .status
        case .voices: action = .voices
        case .subscribe(let all): action = .subscribe(all: all)
        }
        return CheckedRequest(action, id: id)
    }

    /// A batch is accepted whole or not at all, so each of its posts is checked here and the error
    /// names the one at fault.
    private static func check(_ posts: [Post]) throws(SpeechError) -> [SpeechRequest] {
        guard (1...Request.batchLimit).contains(posts.count) else {
            throw SpeechError(.invalidRequest, "'posts' must hold 1 to \(Request.batchLimit) posts, got \(posts.count)")
        }
        var requests: [SpeechRequest] = []
        requests.reserveCapacity(posts.count)
        for (index, post) in posts.enumerated() {
            do {
                requests.append(try post.speechRequest())
            } catch {
                throw SpeechError(error.code, "posts[\(index)]: \(error.message)")
            }
        }
        return requests
    }
}
